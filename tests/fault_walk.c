/* Walks OpenCL fault injection over a whole executor lifecycle (issue 8, item 2).
 *
 *   fault_walk [--jobs J] [--timeout S] [--from N] [--to N] [--icds W1,W2]
 *              LIFECYCLE [ARGS...]
 *
 * LIFECYCLE is fault_lifecycle (fault_shim.c linked in). It runs once without a
 * fault, which gives the number of injectable OpenCL calls T and every call site,
 * then once per N = 1, 2, ... with HGR_FAULT_AT=N (J processes at a time, each
 * killed after S seconds), until three runs in a row make fewer than N calls. Call
 * numbers drift between runs (poll loops, callbacks that find their event done or
 * not, a build thread), so then every injectable call site the walk missed runs
 * once with HGR_FAULT_SITE: alone when a run without a fault reaches it, else with
 * the HGR_FAULT_AT whose failure first reached it (a cleanup path meets a second
 * failure). --icds keeps only the ICDs (of $OCL_ICD_VENDORS)
 * whose .icd file names a library containing one of the words: every run starts
 * the drivers it loads, and rusticl and Clover, which the lifecycle does not use,
 * take longer to start than the rest of a run. Every run must:
 *   - end by itself: no signal, no timeout;
 *   - exit 0 with right outputs (the runtime recovered or did without the call), or
 *     exit 1 printing a FAILED line that names the failed OpenCL function and the
 *     injected error;
 *   - leave no OpenCL object unreleased and no event callback pending (the shim's
 *     counts), and make no sanitizer or Oclgrind report.
 * Prints each defect with the run's output, then a summary: failure points, the
 * distinct call sites failed (function and caller, through addr2line) and how each
 * ended, the sites never failed, and the time taken.
 * Exit 0 when no run had a defect, 1 otherwise, 77 when the lifecycle's devices are
 * absent. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_JOBS 8

static const char* lifecycle;
static char** lifecycle_argv;
static const char* tmp_dir;

static void pause_ms(long ms) {
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&pause, NULL);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- the ICDs the runs load ---------------------------------------------------------- */

static void remove_directory(const char* path) {
  DIR* dir = opendir(path);
  if (!dir) return;
  struct dirent* entry;
  char file[1024];
  while ((entry = readdir(dir)))
    if (entry->d_name[0] != '.') {
      snprintf(file, sizeof(file), "%s/%s", path, entry->d_name);
      unlink(file);
    }
  closedir(dir);
  rmdir(path);
}

/* Makes a vendors directory with the .icd files of $OCL_ICD_VENDORS (else
 * /etc/OpenCL/vendors) whose library names contain one of the comma-separated
 * words, and points OCL_ICD_VENDORS at it. */
static bool keep_icds(const char* words, char* out_dir, size_t capacity) {
  const char* from = getenv("OCL_ICD_VENDORS");
  if (!from || !*from) from = "/etc/OpenCL/vendors";
  snprintf(out_dir, capacity, "%s/fault-walk-%ld-vendors", tmp_dir, (long)getpid());
  DIR* dir = opendir(from);
  if (!dir || mkdir(out_dir, 0755)) {
    fprintf(stderr, "fault_walk: cannot read %s or create %s: %s\n", from, out_dir, strerror(errno));
    if (dir) closedir(dir);
    return false;
  }
  struct dirent* entry;
  int kept = 0;
  while ((entry = readdir(dir))) {
    size_t length = strlen(entry->d_name);
    if (length < 5 || strcmp(entry->d_name + length - 4, ".icd")) continue;
    char path[1024], library[1024] = "";
    snprintf(path, sizeof(path), "%s/%s", from, entry->d_name);
    FILE* file = fopen(path, "r");
    if (!file) continue;
    if (!fgets(library, sizeof(library), file)) library[0] = 0;
    fclose(file);
    bool wanted = false;
    for (const char* word = words; *word && !wanted;) {
      size_t n = strcspn(word, ",");
      char lowered[1024];
      size_t i = 0;
      for (; library[i] && i + 1 < sizeof(lowered); ++i)
        lowered[i] = (char)(library[i] >= 'A' && library[i] <= 'Z' ? library[i] + 32 : library[i]);
      lowered[i] = 0;
      char needle[64];
      snprintf(needle, sizeof(needle), "%.*s", (int)n, word);
      wanted = n && strstr(lowered, needle);
      word += n + (word[n] ? 1 : 0);
    }
    if (!wanted) continue;
    snprintf(path, sizeof(path), "%s/%s", out_dir, entry->d_name);
    file = fopen(path, "w");
    if (file) {
      fputs(library, file);
      fclose(file);
      kept++;
    }
  }
  closedir(dir);
  setenv("OCL_ICD_VENDORS", out_dir, 1);
  printf("fault walk: runs load %d ICD(s) of %s (those naming %s)\n", kept, from, words);
  return true;
}

/* ---- one run ------------------------------------------------------------------------ */

typedef struct run_t {
  unsigned long n;     /* HGR_FAULT_AT; 0: none */
  char site[96];       /* or HGR_FAULT_SITE, "function@0xoffset"; "": none */
  pid_t pid;
  double started;
  char log_path[512];
  char sites_path[520]; /* where the shim lists the call sites it saw */
  bool timed_out;
  int wait_status;
  double seconds;
} run_t;

static void start_run(run_t* run, unsigned long n, const char* site) {
  static unsigned long serial;
  memset(run, 0, sizeof(*run));
  run->n = n;
  snprintf(run->site, sizeof(run->site), "%s", site ? site : "");
  snprintf(run->log_path, sizeof(run->log_path), "%s/fault-walk-%ld-%lu.log", tmp_dir, (long)getpid(), ++serial);
  snprintf(run->sites_path, sizeof(run->sites_path), "%s.sites", run->log_path);
  run->started = now_s();
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(1);
  }
  if (pid == 0) {
    setpgid(0, 0); /* its own group, so a timeout kills the drivers' threads' children too */
    int fd = open(run->log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) _exit(126);
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
    char at[32];
    snprintf(at, sizeof(at), "%lu", n);
    if (n) setenv("HGR_FAULT_AT", at, 1);
    else unsetenv("HGR_FAULT_AT");
    if (run->site[0]) setenv("HGR_FAULT_SITE", run->site, 1);
    else unsetenv("HGR_FAULT_SITE");
    unsetenv("HGR_FAULT_NTH");
    setenv("HGR_FAULT_SITES", run->sites_path, 1);
    execv(lifecycle, lifecycle_argv);
    _exit(127);
  }
  setpgid(pid, pid);
  run->pid = pid;
}

/* True once the run has ended (or was killed at the timeout). */
static bool poll_run(run_t* run, double timeout_s) {
  int status = 0;
  pid_t done = waitpid(run->pid, &status, WNOHANG);
  if (done == run->pid) {
    run->wait_status = status;
    run->seconds = now_s() - run->started;
    return true;
  }
  if (now_s() - run->started > timeout_s) {
    kill(-run->pid, SIGKILL);
    waitpid(run->pid, &status, 0);
    run->wait_status = status;
    run->timed_out = true;
    run->seconds = now_s() - run->started;
    return true;
  }
  return false;
}

static char* read_file(const char* path) {
  FILE* file = fopen(path, "rb");
  if (!file) return strdup("");
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char* text = malloc((size_t)size + 1);
  size_t got = text ? fread(text, 1, (size_t)size, file) : 0;
  if (text) text[got] = 0;
  fclose(file);
  return text;
}

/* ---- what the shim said -------------------------------------------------------------- */

typedef struct shim_line_t {
  bool found;
  unsigned long calls, injectable;
  char injected[256]; /* "function@0xoffset[,...]" or "none" */
  char function[64];  /* the last injected function, or "" (the site a run is counted for) */
  char offset[32];
  char error[160];    /* "NAME[,...]" */
  char balance[256];
  long pending_callbacks;
} shim_line_t;

static shim_line_t parse_shim(const char* output) {
  shim_line_t line;
  memset(&line, 0, sizeof(line));
  const char* at = strstr(output, "hgr-fault-shim: calls=");
  if (!at) return line;
  line.found = sscanf(at, "hgr-fault-shim: calls=%lu injectable=%lu fault_at=%*u injected=%255s error=%159s "
                          "balance=%255s pending_callbacks=%ld",
                      &line.calls, &line.injectable, line.injected, line.error, line.balance,
                      &line.pending_callbacks) == 6;
  const char* last = strrchr(line.injected, ',');
  last = last ? last + 1 : line.injected;
  const char* sign = strchr(last, '@');
  if (sign && strcmp(line.injected, "none")) {
    snprintf(line.function, sizeof(line.function), "%.*s", (int)(sign - last), last);
    snprintf(line.offset, sizeof(line.offset), "%s", sign + 1);
  }
  return line;
}

/* True when text names one of the injected functions together with its error. */
static bool names_an_injection(const shim_line_t* shim, const char* text) {
  const char* function = shim->injected;
  const char* error = shim->error;
  while (*function && *error) {
    size_t function_length = strcspn(function, "@"), error_length = strcspn(error, ",");
    char name[64], code[64];
    snprintf(name, sizeof(name), "%.*s", (int)function_length, function);
    snprintf(code, sizeof(code), "%.*s", (int)error_length, error);
    if (strstr(text, name) && strstr(text, code)) return true;
    function += strcspn(function, ",");
    error += error_length;
    if (*function) ++function;
    if (*error) ++error;
  }
  return false;
}

/* ---- call sites ---------------------------------------------------------------------- */

typedef struct site_t {
  char function[64];
  char offset[32];
  char caller[384]; /* "function (file:line) < caller:line" from addr2line */
  unsigned long clean_calls; /* calls in the run without a fault */
  bool injectable;           /* some run made an injectable call from here */
  unsigned long seen_at;     /* a walk run (HGR_FAULT_AT) that reached it, if none without a fault did */
  char spec[96];             /* "function@offset" for HGR_FAULT_SITE */
  unsigned failed, exited_1, exited_0, defects;
} site_t;

static site_t* sites;
static size_t site_count, site_capacity;

static site_t* find_site(const char* function, const char* offset, bool add) {
  for (size_t s = 0; s < site_count; ++s)
    if (!strcmp(sites[s].function, function) && !strcmp(sites[s].offset, offset)) return &sites[s];
  if (!add) return NULL;
  if (site_count == site_capacity) {
    site_capacity = site_capacity ? 2 * site_capacity : 64;
    sites = realloc(sites, site_capacity * sizeof(*sites));
    if (!sites) exit(1);
  }
  site_t* site = &sites[site_count++];
  memset(site, 0, sizeof(*site));
  snprintf(site->function, sizeof(site->function), "%s", function);
  snprintf(site->offset, sizeof(site->offset), "%s", offset);
  snprintf(site->spec, sizeof(site->spec), "%s@%s", function, offset);
  return site;
}

/* Adds the sites a run saw (the shim's HGR_FAULT_SITES file) and removes the file;
 * with clean, their call counts are the run's without a fault; else n is the run's
 * HGR_FAULT_AT. */
static void merge_sites(const char* path, bool clean, unsigned long n) {
  FILE* file = fopen(path, "r");
  if (!file) return;
  char function[64], offset[32];
  unsigned long count, injectable;
  while (fscanf(file, "%63s %31s %lu %lu", function, offset, &count, &injectable) == 4) {
    site_t* site = find_site(function, offset, true);
    if (clean) site->clean_calls = count;
    site->injectable |= injectable > 0;
    if (!clean && n && !site->clean_calls && !site->seen_at) site->seen_at = n;
  }
  fclose(file);
  unlink(path);
}

/* Names every site's caller through addr2line, with the chain it was inlined into,
 * innermost first: "execution_status (bridge.c:99) < incoming_set_up_to:145 <
 * hgr__bridges_drive:168". */
static void resolve_callers(void) {
  if (!site_count) return;
  size_t capacity = strlen(lifecycle) + 64 + site_count * 24;
  char* command = malloc(capacity);
  size_t used = (size_t)snprintf(command, capacity, "addr2line -a -i -f -e '%s'", lifecycle);
  for (size_t s = 0; s < site_count; ++s) {
    /* The return address is just past the call: look up the call instruction. */
    unsigned long long offset = strtoull(sites[s].offset, NULL, 16);
    used += (size_t)snprintf(command + used, capacity - used, " 0x%llx", offset ? offset - 1 : 0);
  }
  FILE* pipe = popen(command, "r");
  free(command);
  if (!pipe) return;
  /* Per address: "0x...", then per frame a function line and a file:line line. */
  char line[1024], function[256] = "", previous[256] = "";
  size_t current = SIZE_MAX;
  bool function_line = false;
  while (fgets(line, sizeof(line), pipe)) {
    line[strcspn(line, "\n")] = 0;
    if (!strncmp(line, "0x", 2)) {
      current = current == SIZE_MAX ? 0 : current + 1;
      function_line = true;
      previous[0] = 0;
      continue;
    }
    if (current >= site_count) continue;
    if (function_line) {
      snprintf(function, sizeof(function), "%.200s", line);
    } else if (strcmp(function, previous)) {
      const char* place = strrchr(line, '/');
      place = place ? place + 1 : line;
      char* caller = sites[current].caller;
      size_t n = strlen(caller), size = sizeof(sites[current].caller);
      if (!n) snprintf(caller, size, "%.120s (%.*s)", function, (int)strcspn(place, " "), place);
      else if (n < size)
        snprintf(caller + n, size - n, " < %.120s:%.*s", function, (int)strcspn(strchr(place, ':') ? strchr(place, ':') + 1 : place, " "),
                 strchr(place, ':') ? strchr(place, ':') + 1 : place);
      snprintf(previous, sizeof(previous), "%s", function);
    }
    function_line = !function_line;
  }
  pclose(pipe);
}

/* ---- checks -------------------------------------------------------------------------- */

static regex_t sanitizer_report, oclgrind_report;

typedef enum outcome_t { OUTCOME_NOT_REACHED, OUTCOME_FAILED_CLEANLY, OUTCOME_RECOVERED, OUTCOME_DEFECT } outcome_t;

/* Classifies a finished run; on a defect prints why with the run's output. */
static outcome_t judge(const run_t* run, const char* output, const shim_line_t* shim, char* why, size_t why_size) {
  why[0] = 0;
  size_t used = 0;
#define WHY(...) (used += (size_t)snprintf(why + used, used < why_size ? why_size - used : 0, __VA_ARGS__))
  bool exited = !run->timed_out && WIFEXITED(run->wait_status);
  int code = exited ? WEXITSTATUS(run->wait_status) : -1;
  if (run->timed_out) WHY("hang (killed after %.0f s); ", run->seconds);
  else if (WIFSIGNALED(run->wait_status)) WHY("crash (signal %d); ", WTERMSIG(run->wait_status));
  if (!run->timed_out && exited && shim->found && !shim->function[0] && code == 0) return OUTCOME_NOT_REACHED;
  if (!regexec(&sanitizer_report, output, 0, NULL, 0)) WHY("sanitizer report; ");
  if (!regexec(&oclgrind_report, output, 0, NULL, 0)) WHY("Oclgrind report; ");
  if (exited && !shim->found) WHY("no shim summary; ");
  if (shim->found && strcmp(shim->balance, "ok")) WHY("OpenCL objects not released: %s; ", shim->balance);
  if (shim->found && shim->pending_callbacks) WHY("%ld event callbacks never ran; ", shim->pending_callbacks);
  outcome_t outcome = OUTCOME_DEFECT;
  if (exited && code == 0) {
    if (!strstr(output, "lifecycle ok")) WHY("exit 0 without 'lifecycle ok'; ");
    outcome = OUTCOME_RECOVERED;
  } else if (exited && code == 1) {
    const char* failed = strstr(output, "FAILED ");
    char line[4096] = "";
    if (failed) snprintf(line, sizeof(line), "%.*s", (int)strcspn(failed, "\n"), failed);
    if (!failed) WHY("exit 1 without a FAILED line; ");
    else if (shim->function[0] && !names_an_injection(shim, line))
      WHY("the status does not name the failed call and its error (%s: %s); ", shim->injected, shim->error);
    outcome = OUTCOME_FAILED_CLEANLY;
  } else if (exited && code == 2) {
    WHY("wrong outputs; ");
  } else if (exited) {
    WHY("exit %d; ", code);
  }
#undef WHY
  return used ? OUTCOME_DEFECT : outcome;
}

static void print_defect(const run_t* run, const char* output, const char* why) {
  printf("DEFECT at");
  if (run->n) printf(" HGR_FAULT_AT=%lu", run->n);
  if (run->site[0]) printf(" HGR_FAULT_SITE=%s", run->site);
  printf(": %s\n", why);
  /* The output's tail, indented. */
  size_t length = strlen(output);
  const char* start = length > 3000 ? output + length - 3000 : output;
  printf("  --- output%s ---\n", start != output ? " (tail)" : "");
  for (const char* line = start; *line;) {
    size_t n = strcspn(line, "\n");
    printf("  | %.*s\n", (int)n, line);
    line += n + (line[n] ? 1 : 0);
  }
}

int main(int argc, char** argv) {
  int jobs = 2;
  double timeout_s = 20;
  unsigned long from = 1, to = 0;
  const char* icds = NULL;
  int a = 1;
  for (; a < argc && !strncmp(argv[a], "--", 2); a += 2) {
    if (a + 1 >= argc) break;
    if (!strcmp(argv[a], "--jobs")) jobs = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--timeout")) timeout_s = atof(argv[a + 1]);
    else if (!strcmp(argv[a], "--from")) from = strtoul(argv[a + 1], NULL, 10);
    else if (!strcmp(argv[a], "--to")) to = strtoul(argv[a + 1], NULL, 10);
    else if (!strcmp(argv[a], "--icds")) icds = argv[a + 1];
    else break;
  }
  if (a >= argc || jobs < 1 || jobs > MAX_JOBS || from < 1) {
    fprintf(stderr,
            "usage: fault_walk [--jobs 1-%d] [--timeout S] [--from N] [--to N] [--icds W1,W2] LIFECYCLE [ARGS...]\n",
            MAX_JOBS);
    return 2;
  }
  lifecycle = argv[a];
  lifecycle_argv = &argv[a];
  tmp_dir = getenv("HGR_TEST_TMP_DIR");
  if (!tmp_dir || !*tmp_dir) tmp_dir = "/tmp";
  char vendors[600];
  if (icds && !keep_icds(icds, vendors, sizeof(vendors))) return 1;
  /* Sanitizer reports get their own exit code, so they cannot pass for a clean exit 1. */
  const char* asan = getenv("ASAN_OPTIONS");
  char asan_options[1024];
  snprintf(asan_options, sizeof(asan_options), "%s%sexitcode=66", asan ? asan : "", asan && *asan ? ":" : "");
  setenv("ASAN_OPTIONS", asan_options, 1);
  regcomp(&sanitizer_report, "ERROR: (Address|Leak)Sanitizer|runtime error:|AddressSanitizer", REG_EXTENDED | REG_NOSUB);
  regcomp(&oclgrind_report,
          "Invalid (read|write)|[Uu]ninitiali[sz]ed value|data race|Oclgrind: [0-9]+ errors generated|mapped buffer",
          REG_EXTENDED | REG_NOSUB);
  double walk_start = now_s();

  /* The run without a fault, twice: the first may fill caches (programs) that the
   * others then use. */
  run_t clean;
  char* output = NULL;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass) {
      unlink(clean.log_path);
      unlink(clean.sites_path);
    }
    start_run(&clean, 0, NULL);
    while (!poll_run(&clean, 300)) pause_ms(10);
    if (clean.timed_out || !WIFEXITED(clean.wait_status) || WEXITSTATUS(clean.wait_status)) break;
  }
  output = read_file(clean.log_path);
  shim_line_t shim = parse_shim(output);
  char why[2048];
  outcome_t outcome = judge(&clean, output, &shim, why, sizeof(why));
  if (outcome != OUTCOME_NOT_REACHED) {
    if (strstr(output, "no device matches")) {
      printf("fault walk: the lifecycle's devices are absent: skipped\n%s", output);
      if (icds) remove_directory(vendors);
      return 77;
    }
    printf("fault walk: the lifecycle fails without a fault\n");
    print_defect(&clean, output, why[0] ? why : "exit 1");
    if (icds) remove_directory(vendors);
    return 1;
  }
  free(output);
  unlink(clean.log_path);
  unsigned long total = shim.injectable;
  merge_sites(clean.sites_path, true, 0);
  size_t clean_sites = site_count;
  printf("fault walk: without a fault the lifecycle makes %lu injectable OpenCL calls (%lu in all) from %zu call "
         "sites, in %.2f s\n",
         total, shim.calls, clean_sites, clean.seconds);
  if (timeout_s < 8 * clean.seconds) timeout_s = 8 * clean.seconds;
  fflush(stdout);

  /* Every call in turn, then, once each, the injectable sites the walk missed: those
   * that drifting call numbers skipped, alone, and those that only a first failure
   * reaches (cleanup paths), together with the failure that reached them. */
  run_t running[MAX_JOBS];
  int active = 0;
  unsigned long next = from, points = 0, failed_cleanly = 0, recovered = 0, defects = 0, last_n = 0;
  unsigned long end = to ? to : ULONG_MAX, targeted = 0, missed = 0;
  bool walking = true;
  unsigned not_reached = 0;
  size_t next_site = 0;
  double slowest = 0;
  for (;;) {
    while (active < jobs) {
      if (walking && next <= end) {
        start_run(&running[active++], next++, NULL);
        continue;
      }
      if (walking) {
        if (active) break; /* the targeted pass starts once the walk's runs have ended */
        walking = false;
      }
      while (next_site < site_count && (sites[next_site].failed || !sites[next_site].injectable)) ++next_site;
      if (to || next_site >= site_count) break;
      start_run(&running[active++], sites[next_site].clean_calls ? 0 : sites[next_site].seen_at,
                sites[next_site].spec);
      next_site++;
      targeted++;
    }
    if (!active) break;
    pause_ms(5);
    for (int j = 0; j < active; ++j) {
      run_t* run = &running[j];
      if (!poll_run(run, timeout_s)) continue;
      output = read_file(run->log_path);
      merge_sites(run->sites_path, false, run->site[0] ? 0 : run->n);
      shim = parse_shim(output);
      outcome = judge(run, output, &shim, why, sizeof(why));
      if (run->seconds > slowest) slowest = run->seconds;
      char injected_site[128];
      snprintf(injected_site, sizeof(injected_site), "%s@%s", shim.function, shim.offset);
      if (run->site[0] && strcmp(injected_site, run->site)) missed++;
      if (outcome == OUTCOME_NOT_REACHED) {
        /* Past the last call: a run can make a few calls fewer than another. */
        if (!run->site[0] && !to && ++not_reached >= 3) end = next - 1;
      } else {
        points++;
        if (!run->site[0]) not_reached = 0; /* three in a row end the walk */
        if (run->n > last_n) last_n = run->n;
        site_t* site = shim.function[0] ? find_site(shim.function, shim.offset, true) : NULL;
        if (site) site->failed++;
        if (outcome == OUTCOME_FAILED_CLEANLY) {
          failed_cleanly++;
          if (site) site->exited_1++;
        } else if (outcome == OUTCOME_RECOVERED) {
          recovered++;
          if (site) site->exited_0++;
        } else {
          defects++;
          if (site) site->defects++;
          print_defect(run, output, why);
        }
      }
      free(output);
      unlink(run->log_path);
      running[j--] = running[--active];
      fflush(stdout);
    }
  }

  resolve_callers();
  size_t failed_sites = 0;
  for (size_t s = 0; s < site_count; ++s) failed_sites += sites[s].failed > 0;
  printf("\ncall sites failed (OpenCL function, caller): failure points, exit 1 with a named status / exit 0 "
         "with right outputs / defects\n");
  for (size_t s = 0; s < site_count; ++s)
    if (sites[s].failed)
      printf("  %-28s %-72s %4u: %u / %u / %u\n", sites[s].function, sites[s].caller, sites[s].failed,
             sites[s].exited_1, sites[s].exited_0, sites[s].defects);
  size_t never = 0;
  for (size_t s = 0; s < site_count; ++s)
    if (!sites[s].failed) {
      if (!never++) printf("call sites never failed (retains, releases, calls inside callbacks, or injectable sites "
                           "that a targeted run did not reach):\n");
      printf("  %-28s %-72s %lu calls without a fault%s\n", sites[s].function, sites[s].caller, sites[s].clean_calls,
             sites[s].injectable ? ", injectable" : "");
    }
  size_t injectable_sites = 0;
  for (size_t s = 0; s < site_count; ++s) injectable_sites += sites[s].injectable;
  printf("\nfault walk: %lu injectable calls without a fault; %lu failure points (HGR_FAULT_AT=%lu..%lu, then "
         "%lu sites targeted, %lu of them not reached): %lu failed with a named status, %lu recovered, %lu defects; "
         "%zu distinct call sites failed (of %zu injectable; %zu sites seen without a fault); %.1f s in all, slowest run "
         "%.2f s\n",
         total, points, from, last_n, targeted, missed, failed_cleanly, recovered, defects, failed_sites,
         injectable_sites, clean_sites, now_s() - walk_start, slowest);
  if (icds) remove_directory(vendors);
  return defects ? 1 : 0;
}

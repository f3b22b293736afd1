"""splice_section.py DOCUMENT SECTION_FILE NAME [AFTER]: puts SECTION_FILE into
DOCUMENT between the markers <!-- bench/NAME.sh: begin --> and <!-- bench/NAME.sh:
end -->, replacing what they held. When the markers are not there yet: right after
bench/AFTER.sh's section when AFTER is given and that section is there, else (without
AFTER) before "## Devices", else at the end. bench/run.sh keeps such sections when
it writes the document."""
import sys


def main():
    path, section_path, name = sys.argv[1:4]
    after = f"<!-- bench/{sys.argv[4]}.sh: end -->\n" if len(sys.argv) > 4 else None
    begin, end = f"<!-- bench/{name}.sh: begin -->", f"<!-- bench/{name}.sh: end -->"
    try:
        text = open(path).read()
    except FileNotFoundError:
        text = ""
    section = f"{begin}\n{open(section_path).read().rstrip()}\n{end}\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        text = head + section + ("\n" + tail if tail else "")  # one blank line before what follows
    elif after and after in text:
        head, rest = text.split(after, 1)
        text = head + after + "\n" + section + rest
    elif not after and "\n## Devices\n" in text:
        head, rest = text.split("\n## Devices\n", 1)
        text = head + "\n" + section + "\n## Devices\n" + rest
    else:
        text = text + ("\n" if text else "") + section
    open(path, "w").write(text)


if __name__ == "__main__":
    main()

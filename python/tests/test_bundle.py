"""Bundles from Python (hgr/model.h, `hgr compile --bundle`): InferenceSession.write_bundle
writes one, InferenceSession(directory) loads one. A bundle written here runs in
another process whose compiler caches are empty (hgr's, PoCL's, XDG's: as
tests/check_bundle_cli.sh empties them), compiles no program there and gives ONNX
Runtime's outputs; a bundle for a device the process lacks, of another hgr version
or with a damaged file is refused with the C library's message."""
import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import hgr
from conftest import require_device, tiny_reference

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CNN = os.path.join(ROOT, "tests", "data", "symbolic", "cnn.onnx")  # x [N, 3, H, W] -> y [N, 5]
CNN_X = os.path.join(ROOT, "examples", "cnn_x.npy")  # [1, 3, 32, 32]
HGR_TOOL = os.path.join(ROOT, "build", "tools", "hgr")

# Run in a fresh interpreter: loads the bundle, runs it (run and run_async), saves the
# output and prints what the session reports, or the error's class and message.
LOADER = r"""
import json, sys
import numpy as np
import hgr
bundle, x_path, out_path = sys.argv[1:4]
providers = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
try:
    sess = hgr.InferenceSession(bundle, providers=providers)
except hgr.Error as error:
    try:
        devices = [d["spec"] for d in hgr.devices()]
    except hgr.Error:
        devices = []
    print(json.dumps({"error": type(error).__name__, "message": str(error), "devices": devices}))
    sys.exit(0)
x = np.load(x_path)
(y,) = sess.run(None, {sess.get_inputs()[0].name: x})
(y_async,) = sess.run_async(None, {"x": x}).result()
np.save(out_path, y)
print(json.dumps({
    "report": sess.load_report,
    "providers": sess.get_providers(),
    "inputs": [(a.name, a.shape, a.type) for a in sess.get_inputs()],
    "outputs": [(a.name, a.shape, a.type) for a in sess.get_outputs()],
    "async_equal": bool(np.array_equal(y, y_async)),
}))
"""


def empty_caches(folder):
    """The environment of a process whose compiler caches are empty folders of its own."""
    env = dict(os.environ)
    for name, sub in (("HGR_CACHE_DIR", "hgr"), ("POCL_CACHE_DIR", "pocl"), ("XDG_CACHE_HOME", "xdg")):
        env[name] = os.path.join(folder, sub)
        os.makedirs(env[name])
    return env


def load_elsewhere(bundle, tmp_path, env, providers=None):
    """Loads and runs the bundle in another Python process: (its JSON line, the output)."""
    out = str(tmp_path / "y.npy")
    args = [sys.executable, "-c", LOADER, str(bundle), CNN_X, out]
    if providers is not None:
        args.append(json.dumps(providers))
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result, np.load(out) if "error" not in result else None


def onnxruntime_output(model, x):
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install onnxruntime)")
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


@pytest.fixture(scope="module")
def cnn_bundle(tmp_path_factory):
    """A bundle of cnn.onnx for pocl:0 at cnn_x.npy's shape, written by this process."""
    require_device("pocl:0")
    directory = tmp_path_factory.mktemp("bundle") / "cnn.hgr"
    x = np.load(CNN_X)
    with hgr.InferenceSession(CNN, providers=["pocl:0"], input_shapes={"x": list(x.shape)}) as sess:
        assert sess.write_bundle(directory) == str(directory)
    return directory


def copy_of(bundle, tmp_path, name):
    target = tmp_path / name
    shutil.copytree(bundle, target)
    return target


def edit_manifest(bundle, edit):
    path = os.path.join(bundle, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    edit(manifest)
    with open(path, "w") as f:
        json.dump(manifest, f)


def test_write_bundle_writes_the_manifest_the_model_and_a_program_for_pocl(cnn_bundle):
    assert sorted(os.listdir(cnn_bundle)) == ["manifest.json", "model.onnx", "program-0.bin"]
    with open(os.path.join(cnn_bundle, "manifest.json")) as f:
        manifest = json.load(f)
    assert manifest["hgr"] == hgr.__version__ and manifest["model"] == "model.onnx"
    pocl = hgr.find_device("pocl:0")
    assert [(p["device"], p["driver_version"]) for p in manifest["programs"]] == [(pocl["name"],
                                                                                   pocl["driver_version"])]
    with open(CNN, "rb") as f, open(os.path.join(cnn_bundle, "model.onnx"), "rb") as g:
        assert f.read() == g.read()


def test_a_bundle_runs_in_a_fresh_process_with_empty_caches_compiles_nothing_and_matches_onnxruntime(
        cnn_bundle, tmp_path):
    x = np.load(CNN_X)
    want = onnxruntime_output(CNN, x)
    env = empty_caches(str(tmp_path / "caches"))
    result, y = load_elsewhere(cnn_bundle, tmp_path, env)
    assert "error" not in result, result
    report = result["report"]
    assert report["programs"] >= 1
    assert report["programs_compiled"] == 0, report
    assert report["programs_from_cache"] == 0, report
    assert report["programs_from_pool"] == report["programs"], report
    assert result["providers"] == ["pocl:0"]
    assert result["inputs"] == [["x", ["N", 3, "H", "W"], "tensor(float)"]]
    assert result["outputs"] == [["y", ["N", 5], "tensor(float)"]]
    assert result["async_equal"]
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    assert not glob.glob(os.path.join(env["HGR_CACHE_DIR"], "**", "program-*"), recursive=True), \
        "loading the bundle stored programs in hgr's cache"


def test_a_bundle_made_by_hgr_compile_loads_in_python_and_compiles_nothing(tmp_path):
    require_device("pocl:0")
    if not os.access(HGR_TOOL, os.X_OK):
        pytest.skip(f"the hgr tool is not built ({HGR_TOOL})")
    bundle = tmp_path / "cli.hgr"
    compiled = subprocess.run(
        [HGR_TOOL, "compile", CNN, "--input", f"x={CNN_X}", "--device", "0=pocl:0", "--bundle", str(bundle)],
        env=empty_caches(str(tmp_path / "compile")), capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    result, y = load_elsewhere(bundle, tmp_path, empty_caches(str(tmp_path / "run")))
    if result.get("error") == "FailedPreconditionError" and "made by hgr" in result["message"]:
        pytest.skip(f"{HGR_TOOL} is another build of hgr than this package: {result['message']}")
    assert "error" not in result, result
    assert result["report"]["programs_compiled"] == 0 and result["report"]["programs_from_pool"] >= 1, result
    np.testing.assert_allclose(y, onnxruntime_output(CNN, np.load(CNN_X)), rtol=1e-4, atol=1e-5)


def test_the_devices_come_from_the_bundle_and_providers_naming_others_are_refused(cnn_bundle):
    with hgr.InferenceSession(cnn_bundle) as sess:
        assert sess.get_providers() == ["pocl:0"]
    with hgr.InferenceSession(str(cnn_bundle), providers=["pocl:0"]) as sess:
        assert sess.get_providers() == ["pocl:0"]
    require_device("pocl:1")  # the same hardware as pocl:0, but not the device the programs were loaded for
    with pytest.raises(hgr.InvalidArgumentError, match=r"was made for pocl:0, but the providers name pocl:1"):
        hgr.InferenceSession(cnn_bundle, providers=["pocl:1"])
    with pytest.raises(hgr.InvalidArgumentError, match=r"made for pocl:0, but the providers name pocl:0, pocl:1"):
        hgr.InferenceSession(cnn_bundle, providers=["pocl:0", "pocl:1"])


def test_a_bundle_for_pocl_is_refused_where_only_rusticl_is_visible(cnn_bundle, tmp_path):
    rusticl_icd = [p for p in glob.glob(os.path.join(os.environ["OCL_ICD_VENDORS"], "*.icd"))
                   + glob.glob("/etc/OpenCL/vendors/*.icd") if "rusticl" in open(p).read().lower()]
    if not rusticl_icd:
        pytest.skip("rusticl's ICD is not installed")
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    shutil.copy(rusticl_icd[0], vendors / "rusticl.icd")
    env = empty_caches(str(tmp_path / "caches"))
    env["OCL_ICD_VENDORS"] = str(vendors)
    result, _ = load_elsewhere(cnn_bundle, tmp_path, env)
    if result.get("devices") == []:
        pytest.skip(f"rusticl shows no device here: {result['message']}")
    assert result.get("error") == "FailedPreconditionError", result
    assert all(d.startswith("rusticl:") for d in result["devices"]), result
    assert f"bundle {cnn_bundle}" in result["message"]
    assert "which this machine lacks; its devices: rusticl:0" in result["message"]


def test_a_bundle_for_another_driver_version_is_refused_naming_both(cnn_bundle, tmp_path):
    bundle = copy_of(cnn_bundle, tmp_path, "driver")
    edit_manifest(bundle, lambda m: m["programs"][0].update(driver_version="0.0-other"))
    with pytest.raises(hgr.FailedPreconditionError) as caught:
        hgr.InferenceSession(bundle)
    message = str(caught.value)
    assert f"bundle {bundle}" in message and "driver 0.0-other), which this machine lacks" in message
    assert "pocl:0" in message


def test_a_bundle_of_another_hgr_version_is_refused(cnn_bundle, tmp_path):
    bundle = copy_of(cnn_bundle, tmp_path, "version")
    edit_manifest(bundle, lambda m: m.update(hgr="0.0.1"))
    with pytest.raises(hgr.FailedPreconditionError,
                       match=rf"bundle .*made by hgr 0\.0\.1 with kernel library .*; this is hgr {hgr.__version__}"):
        hgr.InferenceSession(bundle, providers=["pocl:0"])


def test_a_damaged_manifest_is_refused_with_the_c_librarys_message(cnn_bundle, tmp_path):
    bundle = copy_of(cnn_bundle, tmp_path, "damaged")
    path = os.path.join(bundle, "manifest.json")
    with open(path, "rb") as f:
        text = f.read()
    with open(path, "wb") as f:
        f.write(text[: len(text) // 2])
    with pytest.raises(hgr.InvalidArgumentError, match=r"bundle .*damaged: manifest\.json: not a JSON object"):
        hgr.InferenceSession(bundle)
    edit_target = copy_of(cnn_bundle, tmp_path, "no_key")
    edit_manifest(edit_target, lambda m: m["programs"][0].pop("key"))
    with pytest.raises(hgr.InvalidArgumentError, match=r"manifest\.json: program 0: no string \"key\""):
        hgr.InferenceSession(edit_target)


def test_a_corrupt_program_file_is_refused_naming_it(cnn_bundle, tmp_path):
    bundle = copy_of(cnn_bundle, tmp_path, "corrupt")
    path = os.path.join(bundle, "program-0.bin")
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(hgr.DataLossError, match=r"program-0\.bin: corrupt"):
        hgr.InferenceSession(bundle)


def test_write_bundle_before_any_specialization_is_refused(tmp_path):
    require_device("pocl:0")
    with hgr.InferenceSession(CNN, providers=["pocl:0"]) as sess:  # symbolic dims: nothing specialized yet
        with pytest.raises(hgr.FailedPreconditionError, match="built no programs yet"):
            sess.write_bundle(tmp_path / "empty.hgr")
    assert not os.path.exists(tmp_path / "empty.hgr" / "manifest.json")


def test_a_session_made_from_bytes_writes_a_bundle_that_runs(tiny_model, tmp_path):
    require_device("pocl:0")
    model, w, b = tiny_model
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    with hgr.InferenceSession(model, providers=["pocl:0"]) as sess:  # fixed shapes: specialized at creation
        directory = sess.write_bundle(str(tmp_path / "tiny.hgr"))
    with open(os.path.join(directory, "model.onnx"), "rb") as f:
        assert f.read() == model
    with hgr.InferenceSession(directory) as sess:
        assert sess.load_report["programs_compiled"] == 0
        assert sess.load_report["programs_from_pool"] >= 1
        for got, want in zip(sess.run(None, {"x": x}), tiny_reference(x, w, b)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

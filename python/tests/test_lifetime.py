"""Sessions free what they hold: RSS stays flat over 1,000 sessions, and the GIL
is released while hgr runs."""
import gc
import threading

import numpy as np

import hgr
from conftest import require_device


def _rss_bytes():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import resource

    return pages * resource.getpagesize()


def test_a_thousand_sessions_leave_rss_flat(tiny_model):
    require_device("pocl:0")
    model = tiny_model[0]
    x = np.ones((2, 4), np.float32)

    def one_session(k):
        sess = hgr.InferenceSession(model, providers=["pocl:0"])
        sess.run(None, {"x": x})
        if k % 2:  # half closed explicitly, half left to garbage collection
            sess.close()

    for k in range(100):
        one_session(k)
    gc.collect()
    after_100 = _rss_bytes()
    for k in range(900):
        one_session(k)
    gc.collect()
    after_1000 = _rss_bytes()
    growth = after_1000 - after_100
    # 900 more sessions: a leak of even 4 KiB each would be 3.5 MiB.
    assert growth < 2 * 1024 * 1024, f"RSS grew by {growth / 1024:.0f} KiB from session 100 to 1,000"


def test_sessions_run_from_several_threads(tiny_model):
    require_device("pocl:0")
    model = tiny_model[0]
    errors = []

    def worker(k):
        try:
            with hgr.InferenceSession(model, providers=["pocl:0"]) as sess:
                for i in range(20):
                    x = np.full((2, 4), k * 100 + i, np.float32)
                    (z,) = sess.run(["z"], {"x": x})
                    np.testing.assert_array_equal(z, -x)
        except Exception as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_one_session_shared_by_threads_stays_consistent(tiny_model):
    require_device("pocl:0")
    errors = []
    with hgr.InferenceSession(tiny_model[0], providers=["pocl:0"]) as sess:
        def worker(k):
            try:
                for i in range(20):
                    x = np.full((2, 4), k * 100 + i, np.float32)
                    (z,) = sess.run(["z"], {"x": x})
                    np.testing.assert_array_equal(z, -x)
            except Exception as error:
                errors.append(error)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors

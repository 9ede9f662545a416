"""The collector around start-up: frozen only in a process the command line owns (`medtemporal._gc`)."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import gc
from medtemporal import _gc

_gc.start_up()
assert gc.isenabled(), "a library caller's collector is left alone"
_gc.started()
assert gc.get_freeze_count() == 0

_gc.own_process()
_gc.start_up()
assert not gc.isenabled(), "collection is off while the start-up builds its objects"
items = [{"id": i} for i in range(1000)]
_gc.started()
assert gc.isenabled() and gc.get_freeze_count() >= 1000, "what the start-up built is frozen"
_gc.started()  # a second call changes nothing
assert gc.isenabled()
frozen = gc.get_freeze_count()
with _gc.not_owned():  # a command run by another (the demo's steps)
    _gc.start_up()
    assert gc.isenabled()
    _gc.started()
assert gc.get_freeze_count() == frozen
_gc.start_up()
assert not gc.isenabled(), "the process is its command's again after the block"
_gc.started()
print("ok")
"""


def test_start_up_objects_are_frozen_only_in_a_command_line_process():
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr

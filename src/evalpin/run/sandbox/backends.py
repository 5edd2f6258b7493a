"""The two namespace backends, unshare and bubblewrap, and which one a run gets.

`wrapper` is the command that puts the launcher in its namespaces (both backends get
the same mount plan: the unshare launcher builds it with mount calls, bubblewrap from
flags); `prefix` is what runs before it, tying the tree to the grader and moving it into
the run's cgroup. `Isolation` records the choice (`probe_isolation` makes it).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evalpin.run.sandbox.box import Box
from evalpin.run.sandbox.mounts import Spec, plan

BACKENDS = ("unshare", "bwrap")
OFF_ENFORCED = "off-enforced"
OFF_UNENFORCED = "off-unenforced"
NETWORK_ON = "on"


@dataclass(frozen=True)
class Isolation:
    """Which containment a run gets here, and whether network-off is enforced."""

    kind: str  # "unshare", "bwrap" or "none"
    network: str  # OFF_ENFORCED or OFF_UNENFORCED
    why: str
    pids_cgroup: bool = False  # a cgroup per run: process and memory caps


def wrapper(
    iso: Isolation, box: Box, spec: Spec, allow_network: bool
) -> tuple[list[str], str | None]:
    """The command that puts the launcher in its namespaces, and the mount point of the
    private root the launcher builds (unshare only; bubblewrap builds it from flags).

    A grader that is not root gets a user namespace (its own uid is root in there, and
    nothing on the host). A root grader gets none: as root it builds the box in new
    mount, pid, ipc, uts and network namespaces (a user namespace would map the box's
    root to the host's root, who may write /proc/sys), and the launcher then becomes the
    box's own unprivileged uid (`Box.uid`) before any tested code runs."""
    tool = shutil.which(iso.kind) if iso.kind != "none" else None
    if iso.kind != "none" and tool is None:
        raise FileNotFoundError(f"{iso.kind} not found on PATH")
    root = box.uid is not None
    if iso.kind == "unshare":  # by its path: the shell before it need not search PATH
        net = [] if allow_network else ["--net"]
        mount_point = Path(tempfile.mkdtemp(prefix="root-", dir=box.root))
        user = ["--mount", "--propagation", "private"] if root else ["--map-root-user"]
        return [tool, *user, *net, *_UNSHARE_REST], str(mount_point)
    if iso.kind == "bwrap":
        net = [] if allow_network else ["--unshare-net"]
        if root:  # and the launcher may give the box's uid, then drop these too
            args = [tool, *_BWRAP_AS_ROOT, *net, "--die-with-parent", "--cap-drop", "ALL"]
            args += [a for cap in _LAUNCHER_CAPS for a in ("--cap-add", cap)]
        else:  # root of its user namespace, with what the launcher needs, then nothing
            args = [tool, "--unshare-all", *(["--share-net"] if allow_network else [])]
            args += ["--uid", "0", "--gid", "0", "--die-with-parent", "--cap-drop", "ALL"]
            args += [a for cap in _USERNS_CAPS for a in ("--cap-add", cap)]
        made = {"/"}
        for op, src, dst, opt in plan(spec):
            # Parents made 0755 (bubblewrap makes a bind's missing parents 0700, which
            # the box's uid could not pass through).
            for parent in reversed(Path(dst).parents):
                if str(parent) not in made:
                    args += ["--dir", str(parent)]
                    made.add(str(parent))
            made.add(dst)
            if op == "ro":
                args += ["--ro-bind", src, dst]
            elif op == "tmpfs":
                args += ["--perms", str(src), "--size", str(opt), "--tmpfs", dst]
            elif op == "work":  # 0700 once filled (a restrictive --perms would give
                args += ["--size", str(opt), "--tmpfs", dst]  # its parents 0700 too)
            elif op in ("dev", "proc"):
                args += [f"--{op}", dst]
            elif op == "dir":
                args += ["--dir", dst]
            elif op == "rebind":  # the launcher binds the box's own entry
                continue
            elif op == "empty":
                args += ["--perms", "0555", "--dir", dst]
            else:
                args += ["--symlink", src, dst]
        return [*args, "--remount-ro", "/", "--chdir", str(spec.cwd), "--"], None
    return [], None


_UNSHARE_REST = ["--ipc", "--uts", "--pid", "--fork", "--kill-child", "--mount-proc", "--"]
_BWRAP_AS_ROOT = ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
# What the launcher needs under a root bubblewrap to give every box its own inodes
# (`launcher.private`), become the box's uid and empty the bounding set; and under a
# bubblewrap of a grader that is not root, the first and the last. It gives them up
# before the command runs.
_LAUNCHER_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_SYS_ADMIN")
_USERNS_CAPS = ("CAP_SETPCAP", "CAP_SYS_ADMIN")


def privileged(iso: Isolation, box: Box) -> bool:
    """Whether the launcher starts with capabilities to give up (everywhere but without
    namespaces as non-root)."""
    return box.uid is not None or iso.kind in ("unshare", "bwrap")


def prefix(box: Box, index: int = 0) -> list[str]:
    """What runs before the wrapper, in the same process: `setpriv` makes it die with
    the grader (a SIGKILLed grader leaves no sandbox running: unshare's --kill-child and
    bubblewrap's --die-with-parent take the rest down), then a shell moves it into the
    run's cgroup (and the cpu cgroup of the run's sandbox number `index`), so the
    namespace tools and everything they start are counted."""
    setpriv = shutil.which("setpriv")
    first = [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []
    if box.cgroup is None:
        return first
    script = 'for f in "$@"; do [ "$f" = -- ] && break; echo 0 > "$f" || exit 71; done; '
    script += 'while [ "$1" != -- ]; do shift; done; shift; exec "$@"'
    return [*first, "/bin/sh", "-c", script, "sh", *box.cgroup.procs_for(index), "--"]

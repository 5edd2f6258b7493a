"""The launcher: the first code that runs inside every sandbox, kept as a string.

`execute` starts it as `python -s -P -S -c LAUNCHER CONFIG [COMMAND...]` (`-I` but
for `-E`: the grader's hash seed is in its environment, nothing else of Python's). It sets the
rlimits, builds the private root under unshare (bubblewrap builds the same mount plan
from flags), hands the sandbox's private folders back to the grader, enters the root,
gives up every privilege (and root itself, when the grader is root), reports readiness
on a pipe, then execs the command, or runs our own `python -c CODE` in its interpreter.
"""

from __future__ import annotations

from evalpin.run.sandbox.mounts import EMPTY

# The launcher runs first inside the sandbox (`python -s -P -S -c`), configured by a JSON
# argument, then execs the command. It reports readiness by writing one byte to an
# inherited pipe, so nothing the tested code does can pass for a setup failure or the
# reverse. Steps:
# - mounts (unshare only): the private root from the mount plan, in a mount namespace
#   that must not be the grader's (checked first: a mount here must never reach the
#   host), every private folder a size-capped tmpfs;
# - hand back: each private folder, opened, sent to the grader over a socket
#   (SCM_RIGHTS); the grader fills them and answers "g";
# - private inodes, while the grader fills them: an overlay of the box's own over every
#   folder bound read-only, copies of the files bound so, its own /proc/sys (`private`);
# - root (unshare only): pivot into the private root, detach the old one;
# - privileges: the bounding and ambient sets emptied, SECBIT_NOROOT locked, then the
#   uid and gids given (the grader is root: a host uid of the case's own, so no host
#   setting that root may write, /proc/sys included, is writable whatever the mounts),
#   a session keyring of its own (the grader's keys are not the candidate's to read),
#   no_new_privs, every capability set emptied and checked empty, and a seccomp filter
#   refusing new user namespaces (the one namespace an unprivileged process may make,
#   and a large kernel surface) and every system call ABI but the native one.
# Syscall numbers: mount_setattr is 442 and clone3 435 on every arch; pivot_root 155
# (x86_64) or 41 (generic); unshare 272 / 97, clone 56 / 220 and keyctl 250 / 219
# (x86_64 / aarch64).

# What the seccomp filter refuses (EPERM) besides new user namespaces and foreign ABIs:
# the calls container runtimes' default profiles refuse (Docker's, Podman's), kept to
# those a grade has no use for, and the ones that would let two boxes share something.
# name: (x86_64 number, aarch64 number, why).
REFUSED_CALLS = {
    # Kernel keys are not namespaced: a key one box adds, any other can read, and it
    # outlives the case (persistent keyrings last days).
    "add_key": (248, 217, "kernel keys are shared between boxes and outlive them"),
    "request_key": (249, 218, "kernel keys are shared between boxes and outlive them"),
    "keyctl": (250, 219, "kernel keys are shared between boxes and outlive them"),
    # A watch sees another box open or read a file both have (the device nodes).
    "inotify_init": (253, None, "a watch sees other boxes use the files both have"),
    "inotify_init1": (294, 26, "a watch sees other boxes use the files both have"),
    "fanotify_init": (300, 262, "a watch sees other boxes use the files both have"),
    # The kernel log: one box can make lines (a crash) that another reads.
    "syslog": (103, 116, "the kernel log is one for the whole host"),
    # Large kernel surfaces no test needs (Docker refuses them without a capability).
    "bpf": (321, 280, "a large kernel surface no test needs"),
    "perf_event_open": (298, 241, "host-wide counters; a large kernel surface"),
    "userfaultfd": (323, 282, "a tool for kernel exploits; no test needs it"),
    "io_uring_setup": (425, 425, "a large kernel surface (refused by Docker)"),
    "io_uring_enter": (426, 426, "a large kernel surface (refused by Docker)"),
    "io_uring_register": (427, 427, "a large kernel surface (refused by Docker)"),
    "open_by_handle_at": (304, 265, "opens host files by handle, past the mounts"),
    "kexec_load": (246, 104, "host administration"),
    "kexec_file_load": (320, 294, "host administration"),
    "init_module": (175, 105, "host administration"),
    "finit_module": (313, 273, "host administration"),
    "delete_module": (176, 106, "host administration"),
    "acct": (163, 89, "host administration"),
    "swapon": (167, 224, "host administration"),
    "swapoff": (168, 225, "host administration"),
    "reboot": (169, 142, "host administration"),
    "quotactl": (179, 60, "host administration"),
    "setns": (308, 268, "joining another namespace"),
    "mount": (165, 40, "the box's mounts are final"),
    "umount2": (166, 39, "the box's mounts are final"),
    "pivot_root": (155, 41, "the box's mounts are final"),
    "open_tree": (428, 428, "the box's mounts are final"),
    "move_mount": (429, 429, "the box's mounts are final"),
    "fsopen": (430, 430, "the box's mounts are final"),
    "fsmount": (432, 432, "the box's mounts are final"),
    "fspick": (433, 433, "the box's mounts are final"),
    "mount_setattr": (442, 442, "the box's mounts are final"),
}
_X86_64 = tuple(x for x, _, _ in REFUSED_CALLS.values())
_AARCH64 = tuple(a for _, a, _ in REFUSED_CALLS.values() if a is not None)
# The host's device nodes a box's /dev holds (bound: the grader holds their locks).
DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
_NUMBERS = (
    f"X86_64_REFUSED = {_X86_64}\nAARCH64_REFUSED = {_AARCH64}\n"
    f"DEV_NODES = {DEV_NODES}\nEMPTY = {EMPTY!r}\n"
)
LAUNCHER_FUNCTIONS = (
    _NUMBERS
    + r"""
import ctypes, json, os, platform, resource, signal, sys

DEV_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"))
libc = ctypes.CDLL(None, use_errno=True)
# Per architecture: its audit id, unshare, clone, and the system calls refused (EPERM)
# besides new user namespaces; `REFUSED_CALLS` in launcher.py names each and says why.
REFUSED = {
    "x86_64": (0xC000003E, 272, 56, X86_64_REFUSED),
    "aarch64": (0xC00000B7, 97, 220, AARCH64_REFUSED),
}

def check(result, what):
    if result != 0:
        raise OSError(ctypes.get_errno(), what)

class Attr(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("set", "clr", "prop", "userns")]

def mount_setattr(path, set_, clr, flags):
    attr = Attr(set_, clr, 0, 0)
    size = ctypes.c_long(ctypes.sizeof(attr))
    at = (ctypes.c_long(-100), ctypes.c_char_p(path.encode()), ctypes.c_long(flags))
    check(libc.syscall(ctypes.c_long(442), *at, ctypes.byref(attr), size),
          "mount_setattr " + path)

def mount(src, dst, fstype, flags, data):
    check(libc.mount(src.encode(), dst.encode(), fstype and fstype.encode(),
                     ctypes.c_ulong(flags), data and data.encode()), "mount " + dst)

def build(plan, newroot):
    def target(dst, is_file=False):
        path = newroot + dst
        os.makedirs(os.path.dirname(path) if is_file else path, exist_ok=True)
        if is_file and not os.path.exists(path):
            open(path, "w").close()
        return path

    if newroot:  # else a room in a root already built (a joining sandbox)
        mount("tmpfs", newroot, "tmpfs", 6, "mode=0755,size=4m")  # MS_NOSUID | MS_NODEV
    for op, src, dst, opt in plan:
        if op == "ro":
            path = target(dst, os.path.isfile(src) or dst.startswith("/dev/"))
            mount(src, path, None, 4096 | 16384, None)  # MS_BIND | MS_REC
            mount_setattr(path, 1, 0, 0x8000)  # MOUNT_ATTR_RDONLY, AT_RECURSIVE
        elif op == "tmpfs":
            mount("tmpfs", target(dst), "tmpfs", 6, "mode=" + src + ",size=" + str(opt))
        elif op == "work":
            mount("tmpfs", target(dst), "tmpfs", 6, "mode=0700,size=" + str(opt))
        elif op == "dev":
            mount("tmpfs", target(dst), "tmpfs", 2, "mode=0755,size=65536")  # MS_NOSUID
            for node in DEV_NODES:
                mount("/dev/" + node, target(dst + "/" + node, True), None, 4096, None)
            for name, link in DEV_LINKS:
                os.symlink(link, newroot + dst + "/" + name)
        elif op == "proc":
            mount("proc", target(dst), "proc", 14, None)  # NOSUID | NODEV | NOEXEC
        elif op == "symlink":
            os.makedirs(os.path.dirname(newroot + dst), exist_ok=True)
            os.symlink(src, newroot + dst)
        elif op == "dir":  # where a joining sandbox's own folder goes
            target(dst)
        elif op == "empty":
            os.makedirs(newroot + dst, mode=0o555, exist_ok=True)

def escaped(path):
    return "".join("\\" + c if c in "\\:," else c for c in path)

def mount_points():
    with open("/proc/self/mountinfo") as table:
        return [line.split()[4].encode().decode("unicode_escape") for line in table]

def private(plan, root):
    # Every folder bound read-only into the box becomes an overlay of its own (locks,
    # leases and notifications live on the overlay's inodes, which no other box has);
    # every file bound so, a copy in a tmpfs of the box's own; /proc/sys and the like,
    # the box's own /proc's entries, not the host's.
    # The second layer an overlay without an upper one needs: the root's empty folder
    # (the plan's `empty` step), read-only with the root once the box is entered.
    spare = root + EMPTY
    files = {}
    points = mount_points()
    for op, src, dst, opt in plan:
        if op != "ro":
            continue
        if not os.path.isdir(root + dst):
            files.setdefault(os.path.dirname(dst), []).append(dst)
            continue
        # An overlay hides the mounts below its lower folder (and cannot be made over
        # mounts a user namespace locked): those get overlays of their own.
        below = [p for p in points if p.startswith(root + dst + "/")]
        for folder in below or [root + dst]:
            option = "lowerdir=" + escaped(folder) + ":" + escaped(spare)
            try:
                mount("overlay", folder, "overlay", 7, option)  # RDONLY | NOSUID | NODEV
            except OSError:
                pass  # no overlays here (a kernel before 5.11 in a user namespace)
    for parent, names in files.items():
        data = {}
        for name in names:
            with open(root + name, "rb") as held:
                data[name] = held.read()
        size = sum(len(d) for d in data.values()) + 65536
        mount("tmpfs", root + parent, "tmpfs", 6, "mode=0755,size=" + str(size))
        for name, content in data.items():
            fd = os.open(root + name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view):]
            os.close(fd)
        mount_setattr(root + parent, 1, 0, 0)
    for op, src, dst, opt in plan:
        if op == "rebind":  # the box's own /proc's entry, read-only
            mount(root + dst, root + dst, None, 4096 | 16384, None)
            mount_setattr(root + dst, 1, 0, 0x8000)

def hand_back(sock, paths, namespaces=()):
    import socket
    fds = [os.open(p, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW) for p in paths]
    fds += [os.open("/proc/self/ns/" + n, os.O_RDONLY) for n in namespaces]
    channel = socket.socket(fileno=sock)
    socket.send_fds(channel, [b"h"], fds)
    for fd in fds:
        os.close(fd)
    return channel

def filled(channel):
    with channel:
        if channel.recv(1) != b"g":
            raise OSError("the grader did not fill the private folders")

def enter(newroot):
    os.chdir(newroot)
    pivot = 155 if platform.machine() == "x86_64" else 41
    check(libc.syscall(ctypes.c_long(pivot), b".", b"."), "pivot_root")
    check(libc.umount2(b".", 2), "detach the old root")  # MNT_DETACH
    os.chdir("/")
    mount_setattr("/", 1, 0, 0)  # the new root's own tmpfs becomes read-only

def loopback_up():
    # The sandbox's own network namespace starts with its loopback down (unshare's; the
    # fork server's): a test's server on 127.0.0.1 works as under plain pytest. Only
    # this namespace's: no host service is there.
    import fcntl, socket, struct
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        got = fcntl.ioctl(probe, 0x8913, struct.pack("16sH14x", b"lo", 0))  # SIOCGIFFLAGS
        flags = struct.unpack("16sH14x", got)[1]
        if not flags & 1:  # IFF_UP
            fcntl.ioctl(probe, 0x8914, struct.pack("16sH14x", b"lo", flags | 1))

def overlay(steps):
    # A joining sandbox, once its folders are filled: each sealed one read-only, then
    # its files bound read-only over paths of the folders both processes share.
    for op, src, dst in steps:
        if op == "seal":
            mount_setattr(dst, 1, 0, 0x8000)  # MOUNT_ATTR_RDONLY, AT_RECURSIVE
        elif op == "noexec":
            mount_setattr(dst, 8, 0, 0)  # MOUNT_ATTR_NOEXEC
        elif op == "bind":
            if not os.path.isfile(dst) or os.path.islink(dst):
                raise OSError("nothing to bind over at " + dst)
            mount(src, dst, None, 4096, None)  # MS_BIND
            mount_setattr(dst, 1, 0, 0)

def join(ns):
    # Start in a copy of the base sandbox's mount namespace (its user and network
    # namespaces too, when it has them), with pid, ipc and uts namespaces of our own:
    # return as pid 1 of them; this process waits for it and exits with its status.
    for name, flag in (("user", 0x10000000), ("mnt", 0x00020000), ("net", 0x40000000)):
        if ns.get(name) is not None:
            check(libc.setns(ns[name], flag), "setns " + name)
            os.close(ns[name])
    # CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    check(libc.unshare(0x00020000 | 0x20000000 | 0x08000000 | 0x04000000), "unshare")
    mount("none", "/", None, 16384 | (1 << 18), None)  # MS_REC | MS_PRIVATE
    init = os.fork()
    if init == 0:
        check(libc.prctl(1, signal.SIGKILL, 0, 0, 0), "parent-death signal")
        return
    os.closerange(3, 65536)  # only the sandbox holds its descriptors
    code = wait_for(init)
    os._exit(code & 0xFF if code >= 0 else 128 - code)

def wait_for(pid):
    # The exit code of a child (negative: the signal that killed it).
    while True:
        try:
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        except InterruptedError:
            continue

class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

class CapData(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint32) for n in ("effective", "permitted", "inheritable")]

def drop(uid, privileged):
    if privileged:  # what needs CAP_SETPCAP goes first
        cap = 0
        while libc.prctl(24, cap, 0, 0, 0) == 0:  # PR_CAPBSET_DROP until past the last
            cap += 1
        check(libc.prctl(28, 3, 0, 0, 0), "securebits")  # SECBIT_NOROOT and its lock
    check(libc.prctl(47, 4, 0, 0, 0), "ambient caps")  # PR_CAP_AMBIENT_CLEAR_ALL
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.getresuid() != (uid, uid, uid) or os.getgroups():
            raise OSError("still root")
        # A change of uid clears the parent-death signal (unshare's --kill-child, the
        # zygote's, bubblewrap's --die-with-parent): armed again, or a pid 1 whose
        # keeper died would live on, reparented to the host's init.
        check(libc.prctl(1, signal.SIGKILL, 0, 0, 0), "parent-death signal")
    # A session keyring of its own: the grader's is inherited, and whoever possesses a
    # keyring may read its keys, whatever their uid (KEYCTL_JOIN_SESSION_KEYRING).
    keyctl = 250 if platform.machine() == "x86_64" else 219
    if libc.syscall(ctypes.c_long(keyctl), 1, None) < 0 and ctypes.get_errno() != 38:
        raise OSError(ctypes.get_errno(), "session keyring")  # ENOSYS: no keys here
    check(libc.prctl(38, 1, 0, 0, 0), "no_new_privs")
    # Our own capabilities too: the command may run in this process, with no execve to
    # drop them (_LINUX_CAPABILITY_VERSION_3, every set empty).
    check(libc.capset(ctypes.byref(CapHeader(0x20080522, 0)), (CapData * 2)()), "capset")
    held = (CapData * 2)()
    check(libc.capget(ctypes.byref(CapHeader(0x20080522, 0)), held), "capget")
    if any(d.effective or d.permitted or d.inheritable for d in held):
        raise OSError("capabilities remain")
    cap = 0
    while True:
        state = libc.prctl(23, cap, 0, 0, 0)  # PR_CAPBSET_READ, -1 past the last cap
        if state < 0:
            break
        if state:
            raise OSError("bounding set")
        cap += 1
    no_new_user_namespaces()

def no_new_user_namespaces():
    machine = platform.machine()
    if machine not in REFUSED:
        return  # documented: the filter exists on x86_64 and aarch64
    arch, unshare, clone, refused = REFUSED[machine]
    allow, eperm, enosys = 0x7FFF0000, 0x00050001, 0x00050026
    code = [
        (0x20, 0, 0, 4),           # ld arch
        (0x15, 1, 0, arch),        # native ABI: on
        (0x06, 0, 0, eperm),       # any other ABI (int 0x80): refused
        (0x20, 0, 0, 0),           # ld nr
        (0x35, 0, 1, 0x40000000),  # the x32 ABI's numbers: refused
        (0x06, 0, 0, eperm),
        (0x15, 0, 1, 435),         # clone3: ENOSYS, so libc falls back to clone
        (0x06, 0, 0, enosys),
    ]
    for nr in refused:             # what no grade needs and a box could share (keys...)
        code += [(0x15, 0, 1, nr), (0x06, 0, 0, eperm)]
    code += [
        (0x15, 1, 0, unshare),
        (0x15, 0, 3, clone),
        (0x20, 0, 0, 16),          # ld the flags (low word of the first argument)
        (0x45, 0, 1, 0x10000000),  # CLONE_NEWUSER: refused
        (0x06, 0, 0, eperm),
        (0x06, 0, 0, allow),
    ]
    class Op(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte),
                    ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]
    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Op))]
    ops = (Op * len(code))(*[Op(*c) for c in code])
    prog = Prog(len(code), ops)
    check(libc.prctl(22, 2, ctypes.byref(prog), 0, 0), "seccomp")  # SECCOMP_MODE_FILTER

def launch(cfg, argv):
    step = "limits"
    if "python_env" in cfg:  # started by `execute`: the box's own PYTHON* back, no seed
        os.environ.pop("PYTHONHASHSEED", None)
        os.environ.update(cfg["python_env"])
    try:
        for name, value in cfg["limits"].items():
            which = getattr(resource, name)
            hard = resource.getrlimit(which)[1]
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))
        if cfg.get("join"):
            step = "join"
            join(cfg["join"])
        if cfg.get("loopback"):
            step = "loopback"
            loopback_up()
        newroot = cfg["newroot"]
        if newroot or cfg.get("room"):
            step = "mounts"
            if newroot and os.stat("/proc/self/ns/mnt").st_ino == cfg["host_mount_ns"]:
                raise OSError("in the grader's own mount namespace")
            root = os.stat("/")  # a room: in the base's root, whose /proc is not ours yet
            if not newroot and [root.st_dev, root.st_ino] == cfg["host_root"]:
                raise OSError("in the grader's own root")
            build(cfg["plan"], newroot or "")
        if cfg["private"]:
            # The box's own inodes, before a sandbox that joins this one copies its mounts.
            step = "private inodes"
            private(cfg["plan"], newroot or "")
        if newroot:  # first: a sandbox joining this one starts in this root
            step = "root"
            enter(newroot)
        if cfg["hand_back"] or cfg.get("hand_back_ns"):
            step = "hand back"
            filled(hand_back(cfg["hand_back_fd"], cfg["hand_back"], cfg.get("hand_back_ns", ())))
        if cfg.get("after"):
            step = "overlay"
            overlay(cfg["after"])
        if cfg["drop"]:
            step = "privileges"
            drop(cfg["uid"], cfg["privileged"])
        if cfg["drop"]:
            # A session and process group of its own: nothing of evalpin's outside the
            # pid namespace (the wrapper, the keeper) is in the candidate's, so kill(0)
            # or killpg reach only the box.
            step = "session"
            os.setsid()
        step = "chdir"
        os.chdir(cfg["cwd"])
        os.write(cfg["ready_fd"], b"1")
        os.close(cfg["ready_fd"])
    except Exception as exc:
        os.write(2, f"evalpin sandbox: {step} failed: {exc}\n".encode())
        os._exit(70)
    inline = cfg["inline"]
    if inline is None:
        os.execv(argv[0], argv)
    # Our own `python -c CODE` runs here, saving an interpreter start: the flags it would
    # have had (-I's effect is in force), then site-packages, then the code as __main__.
    sys.dont_write_bytecode = "-B" in inline["flags"]
    if "-u" in inline["flags"]:
        sys.stdout.reconfigure(write_through=True)
        sys.stderr.reconfigure(write_through=True)
    if "-S" not in inline["flags"] and "site" not in sys.modules:
        import site
        site.main()
    sys.argv = ["-c", *inline["args"]]
    exec(compile(inline["code"], "<string>", "exec"), {"__name__": "__main__"})
"""
)
# The steps as a script: `python -s -P -S -c LAUNCHER CONFIG [COMMAND...]`. The fork server
# (zygote.py) runs the same functions in a forked child of its own.
LAUNCHER = LAUNCHER_FUNCTIONS + "\nlaunch(json.loads(sys.argv[1]), sys.argv[2:])\n"

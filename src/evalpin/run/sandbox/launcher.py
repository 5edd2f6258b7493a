"""The launcher: the first code that runs inside every sandbox, kept as a string.

`execute` starts it as `python -I -S -c LAUNCHER CONFIG [COMMAND...]`. It sets the
rlimits, builds and enters the private root under unshare (bubblewrap builds the same
mount plan from flags), drops every capability, reports readiness on a pipe, then execs
the command, or runs our own `python -c CODE` in its interpreter.
"""

from __future__ import annotations

# The launcher runs first inside the sandbox (`python -I -S -c`), configured by a JSON
# argument, then execs the command. It reports readiness by writing one byte to an
# inherited pipe, so nothing the tested code does can pass for a setup failure or the
# reverse. Under unshare it builds the private root from the mount plan (the same plan
# bubblewrap gets as flags), pivots into it and drops every capability. Syscall numbers:
# mount_setattr is 442 on every arch; pivot_root is 155 on x86_64, 41 on generic ones.
LAUNCHER = r"""
import ctypes, json, os, platform, resource, sys

DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"))

def harden(plan, newroot):
    libc = ctypes.CDLL(None, use_errno=True)

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

    def target(dst, is_file=False):
        path = newroot + dst
        os.makedirs(os.path.dirname(path) if is_file else path, exist_ok=True)
        if is_file and not os.path.exists(path):
            open(path, "w").close()
        return path

    mount("tmpfs", newroot, "tmpfs", 6, "mode=0755,size=1m")  # MS_NOSUID | MS_NODEV
    for op, src, dst, opt in plan:
        if op in ("ro", "rw"):
            path = target(dst, os.path.isfile(src) or dst.startswith("/dev/"))
            mount(src, path, None, 4096 | 16384, None)  # MS_BIND | MS_REC
            if op == "ro":
                mount_setattr(path, 1, 0, 0x8000)  # MOUNT_ATTR_RDONLY, AT_RECURSIVE
        elif op == "tmpfs":
            mount("tmpfs", target(dst), "tmpfs", 6, "mode=" + src + ",size=" + str(opt))
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
    os.chdir(newroot)
    pivot = 155 if platform.machine() == "x86_64" else 41
    check(libc.syscall(ctypes.c_long(pivot), b".", b"."), "pivot_root")
    check(libc.umount2(b".", 2), "detach the old root")  # MNT_DETACH
    os.chdir("/")
    mount_setattr("/", 1, 0, 0)  # the new root's own tmpfs becomes read-only
    check(libc.prctl(28, 3, 0, 0, 0), "securebits")  # SECBIT_NOROOT and its lock
    check(libc.prctl(47, 4, 0, 0, 0), "ambient caps")  # PR_CAP_AMBIENT_CLEAR_ALL
    cap = 0
    while libc.prctl(24, cap, 0, 0, 0) == 0:  # PR_CAPBSET_DROP until past the last cap
        cap += 1
    if libc.prctl(23, 0, 0, 0, 0) != 0:  # PR_CAPBSET_READ: cap 0 must be gone
        raise OSError(ctypes.get_errno(), "bounding set")
    check(libc.prctl(38, 1, 0, 0, 0), "no_new_privs")

    class CapHeader(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class CapData(ctypes.Structure):
        _fields_ = [(n, ctypes.c_uint32) for n in ("effective", "permitted", "inheritable")]

    # Our own capabilities too: the command may run in this process, with no execve to
    # drop them (_LINUX_CAPABILITY_VERSION_3, every set empty).
    check(libc.capset(ctypes.byref(CapHeader(0x20080522, 0)), (CapData * 2)()), "capset")

cfg, argv = json.loads(sys.argv[1]), sys.argv[2:]
step = "limits"
try:
    for name, value in cfg["limits"].items():
        which = getattr(resource, name)
        hard = resource.getrlimit(which)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))
    step = "mounts"
    if cfg["newroot"]:
        harden(cfg["plan"], cfg["newroot"])
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
# have had (-I is already in force), then site-packages, then the code as __main__.
sys.dont_write_bytecode = "-B" in inline["flags"]
if "-u" in inline["flags"]:
    sys.stdout.reconfigure(write_through=True)
    sys.stderr.reconfigure(write_through=True)
if "-S" not in inline["flags"]:
    import site
    site.main()
sys.argv = ["-c", *inline["args"]]
exec(compile(inline["code"], "<string>", "exec"), {"__name__": "__main__"})
"""

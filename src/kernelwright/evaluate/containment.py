"""Confining a candidate's process with what Linux gives: Landlock, seccomp and resource limits.

Applied by the candidate's process to itself, first thing, before it imports torch or any
candidate code (Landlock restricts the calling thread and the threads and processes it creates
later, so it must come before any thread exists):

    Landlock     the file system is read-only outside its own scratch folder, /dev/shm and its
                 own /proc entry, and
                 unreadable outside the system, Python and package folders (the task, the
                 archive, caches and kernelwright's home are out of reach, from Python or from C);
                 no TCP; no signals to, and no ptrace or /proc/PID/mem of, processes outside the
                 sandbox (ABI 6 scoping); devices limited to the GPU and a few pseudo-devices
    seccomp      always: no mount, ptrace, process_vm_*, kernel modules, reboot, bpf, namespaces;
                 after ``seal`` (once the candidate has compiled its kernels): no new processes
                 (fork, vfork, clone without CLONE_THREAD, execve)
    rlimits      no core files, bounded file size and CPU seconds; on the CPU, bounded data size

What is in force is reported back (``ContainmentReport``) and ends up in the verdict; a machine
without Landlock or seccomp still evaluates, with the gap named. ``self_test`` proves the
protected paths are out of reach after the fact: a path still readable is reported, not assumed.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

# -- Landlock ------------------------------------------------------------------------------------

_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REMOVE_DIR = 1 << 4
_FS_REMOVE_FILE = 1 << 5
_FS_MAKE_CHAR = 1 << 6
_FS_MAKE_DIR = 1 << 7
_FS_MAKE_REG = 1 << 8
_FS_MAKE_SOCK = 1 << 9
_FS_MAKE_FIFO = 1 << 10
_FS_MAKE_BLOCK = 1 << 11
_FS_MAKE_SYM = 1 << 12
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1

_READ = _FS_READ_FILE | _FS_READ_DIR
_READ_EXEC = _READ | _FS_EXECUTE
_FILE_ONLY = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV

# System folders every Python, compiler and driver needs to read; anything else must be named.
SYSTEM_READ_ROOTS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc")
# Pseudo-file systems read for CPU, memory and driver facts.
SYSTEM_INFO_ROOTS = ("/proc", "/sys")
# Device files a kernel may open: the GPU's, and the harmless pseudo-devices.
_DEV_READ_WRITE = ("/dev/null", "/dev/zero", "/dev/full")
_DEV_READ = ("/dev/urandom", "/dev/random")


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is unavailable."""
    if platform.system() != "Linux":
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(
        _SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), _LANDLOCK_CREATE_RULESET_VERSION
    )
    return max(0, int(version))


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= _FS_REFER
    if abi >= 3:
        rights |= _FS_TRUNCATE
    if abi >= 5:
        rights |= _FS_IOCTL_DEV
    return rights


def _apply_landlock(abi: int, rules: Sequence[tuple[str, int]]) -> list[str]:
    """Restrict this thread (and all it creates) to ``rules``: (path, rights) pairs."""
    libc = ctypes.CDLL(None, use_errno=True)
    handled = _fs_rights(abi)
    net = _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("=QQQ", handled, net, scoped)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    skipped: list[str] = []
    try:
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                skipped.append(path)
                continue
            try:
                allowed = rights & handled
                if not os.path.isdir(path):
                    allowed &= _FILE_ONLY
                rule = ctypes.create_string_buffer(struct.pack("=Qi", allowed, fd), 12)
                if libc.syscall(_SYS_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH,
                                rule, 0) < 0:
                    skipped.append(path)
            finally:
                os.close(fd)
        _no_new_privs(libc)
        if libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return skipped


def _no_new_privs(libc: ctypes.CDLL) -> None:
    pr_set_no_new_privs = 38
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")


# -- seccomp -------------------------------------------------------------------------------------

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# name -> syscall number, per architecture (x86_64 / generic table used by aarch64).
_SYSCALLS = {
    "x86_64": {
        "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone3": 435,
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "mount": 165,
        "umount2": 166, "reboot": 169, "kexec_load": 246, "kexec_file_load": 320,
        "init_module": 175, "finit_module": 313, "delete_module": 176, "swapon": 167,
        "swapoff": 168, "pivot_root": 155, "chroot": 161, "setns": 308, "unshare": 272,
        "bpf": 321, "keyctl": 250, "add_key": 248, "request_key": 249, "setsid": 112,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsmount": 432,
        "process_madvise": 440, "pidfd_getfd": 438,
    },
    "aarch64": {
        "clone": 220, "execve": 221, "execveat": 281, "clone3": 435,
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "mount": 40,
        "umount2": 39, "reboot": 142, "kexec_load": 104, "kexec_file_load": 294,
        "init_module": 105, "finit_module": 273, "delete_module": 106, "swapon": 224,
        "swapoff": 225, "pivot_root": 41, "chroot": 51, "setns": 268, "unshare": 97,
        "bpf": 280, "keyctl": 219, "add_key": 217, "request_key": 218, "setsid": 157,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsmount": 432,
        "process_madvise": 440, "pidfd_getfd": 438,
    },
}
# Never needed by a kernel; each could change the machine or reach another process.
ALWAYS_DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "reboot",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "swapon",
    "swapoff", "pivot_root", "chroot", "setns", "unshare", "bpf", "keyctl", "add_key",
    "request_key", "open_tree", "move_mount", "fsopen", "fsmount", "process_madvise",
    "pidfd_getfd",
)
# Denied once the candidate's kernels are compiled: no process may start after that.
PROCESS_CREATION = ("fork", "vfork", "execve", "execveat", "setsid")
_CLONE_THREAD = 0x00010000

_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JGE_K = 0x35
_BPF_JSET_K = 0x45
_BPF_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
# Without it, kernels that mitigate speculative store bypass "for seccomp" (the default of many
# distributions' kernels) turn the mitigation on for every filtered thread, which slows all of
# the process's own code, Python and launches included: sub-millisecond calls would be judged
# host-bound that are not outside the harness. What the filter refuses is unchanged.
_SECCOMP_FILTER_FLAG_SPEC_ALLOW = 4
_SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)


def _filter(arch: str, denied: Iterable[str], deny_process_clone: bool) -> bytes:
    """A BPF program: EPERM for ``denied`` (and clone without CLONE_THREAD), ENOSYS for clone3
    when processes are denied (glibc then falls back to clone), allow the rest."""
    table = _SYSCALLS[arch]
    numbers = sorted({table[name] for name in denied if name in table})
    prog = [
        _insn(_BPF_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        _insn(_BPF_JEQ_K, 1, 0, _AUDIT_ARCH[arch]),
        _insn(_BPF_RET_K, 0, 0, _RET_ERRNO | errno.EPERM),  # a foreign ABI: nothing
        _insn(_BPF_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    if arch == "x86_64":  # the x32 ABI's numbers alias the ones checked below
        prog.append(_insn(_BPF_JGE_K, 0, 1, 0x40000000))
        prog.append(_insn(_BPF_RET_K, 0, 0, _RET_ERRNO | errno.EPERM))
    for nr in numbers:
        prog.append(_insn(_BPF_JEQ_K, 0, 1, nr))
        prog.append(_insn(_BPF_RET_K, 0, 0, _RET_ERRNO | errno.EPERM))
    if deny_process_clone:
        prog.append(_insn(_BPF_JEQ_K, 0, 1, table["clone3"]))
        prog.append(_insn(_BPF_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS))
        prog.append(_insn(_BPF_JEQ_K, 0, 4, table["clone"]))
        prog.append(_insn(_BPF_LD_W_ABS, 0, 0, 16))  # args[0] (low half): the clone flags
        prog.append(_insn(_BPF_JSET_K, 1, 0, _CLONE_THREAD))
        prog.append(_insn(_BPF_RET_K, 0, 0, _RET_ERRNO | errno.EPERM))
        prog.append(_insn(_BPF_RET_K, 0, 0, _RET_ALLOW))
    prog.append(_insn(_BPF_RET_K, 0, 0, _RET_ALLOW))
    return b"".join(prog)


def _install_seccomp(program: bytes) -> None:
    arch = platform.machine()
    libc = ctypes.CDLL(None, use_errno=True)
    _no_new_privs(libc)
    n = len(program) // 8
    filt = ctypes.create_string_buffer(program, len(program))
    fprog = ctypes.create_string_buffer(struct.pack("=HxxxxxxQ", n, ctypes.addressof(filt)), 16)
    # TSYNC: every thread of the process gets the filter, not only the caller. SPEC_ALLOW
    # (Linux 4.17 on): the process keeps the speculation settings it had; a kernel without the
    # flag refuses it (EINVAL), and the filter goes in without it.
    def install(flags: int) -> bool:
        return bool(libc.syscall(_SYS_SECCOMP[arch], _SECCOMP_SET_MODE_FILTER, flags, fprog) == 0)

    if install(_SECCOMP_FILTER_FLAG_TSYNC | _SECCOMP_FILTER_FLAG_SPEC_ALLOW):
        return
    if ctypes.get_errno() != errno.EINVAL or not install(_SECCOMP_FILTER_FLAG_TSYNC):
        raise OSError(ctypes.get_errno(), "seccomp(SECCOMP_SET_MODE_FILTER) failed")


def seccomp_supported() -> bool:
    """seccomp filters can be built for this machine's architecture."""
    return platform.system() == "Linux" and platform.machine() in _AUDIT_ARCH


# -- a PID namespace of its own -------------------------------------------------------------------

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_MS_REC, _MS_PRIVATE = 0x4000, 1 << 18


def enter_pid_namespace() -> bool:
    """Move what follows into new user, mount and PID namespaces; False if the machine refuses.

    Three processes come of it: this one waits outside; a minimal init (PID 1 of the new
    namespace, with its own /proc) waits inside; the caller goes on as PID 2, so it keeps
    ordinary signal semantics (PID 1 ignores signals it has no handler for, abort included).
    It sees no process outside the namespace, all it starts dies with the init, and its /dev/shm
    is a fresh one of its own. Each waiter
    ends the way the process it waits for ended. Must run while the process is single-threaded.
    """
    if platform.system() != "Linux":
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWPID | _CLONE_NEWNS) != 0:
        return False
    try:
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"0 {uid} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"0 {gid} 1")
    except OSError:
        return False
    init = os.fork()
    if init:
        _wait_and_mirror(init, inside=False)
    _die_with_parent(libc)
    libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None)
    libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)
    # A /dev/shm of its own: nothing written there outlives it or reaches another candidate.
    libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=16g")
    worker = os.fork()
    if worker:
        _wait_and_mirror(worker, inside=True)
    _die_with_parent(libc)
    return True


def _wait_and_mirror(pid: int, inside: bool) -> None:
    """Wait for ``pid``, then end the same way (never returns).

    PID 1 cannot kill itself with a signal, so inside the namespace a death by signal ``s`` is
    passed on as exit code 128 + s, and the waiter outside turns it back into the signal.
    """
    import signal

    for forwarded in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(forwarded, lambda *_a, p=pid: os.kill(p, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    if os.WIFSIGNALED(status):
        sig, code = int(os.WTERMSIG(status)), 128 + int(os.WTERMSIG(status))
    else:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1
        sig = code - 128 if code > 128 and not inside else 0
    if sig and not inside:
        signal.signal(sig, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), sig)
    os._exit(code)


def _die_with_parent(libc: ctypes.CDLL) -> None:
    import signal

    libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG


# -- the sandbox ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sandbox:
    """What a candidate's process may touch.

    Attributes:
        scratch: its own empty folder (cwd, HOME, TMPDIR, compile caches): read-write.
        read_roots: folders it may read and execute from beyond the system folders (Python,
            packages, kernelwright's own package, the CUDA toolkit).
        protected: paths it must not read (the task, kernelwright's home, the judge's folder);
            checked after the sandbox is in force.
        cpu_seconds: RLIMIT_CPU for the whole process (0: none).
        data_bytes: RLIMIT_DATA (0: none; left unset on a GPU, whose driver maps large areas).
    """

    scratch: str
    read_roots: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    cpu_seconds: int = 0
    data_bytes: int = 0


@dataclass(slots=True)
class ContainmentReport:
    """What is in force in the candidate's process (plain values: it crosses the channel)."""

    landlock_abi: int = 0
    pid_namespace: bool = False
    seccomp: bool = False
    sealed: bool = False
    rlimits: dict[str, int] = field(default_factory=dict)
    readable_protected: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def gaps(self) -> list[str]:
        """Plain-language gaps, for the verdict's labels (empty when fully contained)."""
        gaps = []
        if not self.landlock_abi:
            gaps.append("no Landlock: the file system is guarded by an audit hook only")
        elif self.landlock_abi < 6:
            gaps.append(f"Landlock ABI {self.landlock_abi}: signals to other processes not scoped")
        if not self.seccomp:
            gaps.append("no seccomp: process creation is not blocked")
        if not self.pid_namespace:
            gaps.append("no PID namespace: other processes are visible (and their command lines)")
        if self.readable_protected:
            gaps.append(f"still readable: {', '.join(self.readable_protected)}")
        return gaps

    def to_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {
            "landlock_abi": self.landlock_abi,
            "pid_namespace": self.pid_namespace,
            "seccomp": self.seccomp,
            "sealed": self.sealed,
            "rlimits": dict(self.rlimits),
            "readable_protected": list(self.readable_protected),
            "errors": list(self.errors),
        }


def default_read_roots() -> tuple[str, ...]:
    """Python's own folders, the installed packages, kernelwright's package and the CUDA toolkit.

    Not the import path as a whole: it holds the working folder and whatever ``PYTHONPATH``
    names (the user's projects, where tasks live).
    """
    import site
    import sysconfig

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib", "include"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(path)
    roots.update(site.getsitepackages())
    roots.add(site.getusersitepackages())
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots.add(package)  # kernelwright itself (not the repository around it)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            roots.add(os.environ[var])
    for entry in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if entry:
            roots.add(entry)
    return tuple(sorted(os.path.realpath(r) for r in roots if os.path.exists(r)))


def enter(sandbox: Sandbox) -> ContainmentReport:
    """Confine this process for the rest of its life; call before any thread exists."""
    report = ContainmentReport()
    _set_rlimits(sandbox, report)
    if seccomp_supported():
        try:
            _install_seccomp(_filter(platform.machine(), ALWAYS_DENIED, False))
            report.seccomp = True
        except OSError as exc:
            report.errors.append(f"seccomp: {exc}")
    abi = landlock_abi()
    if abi:
        try:
            _apply_landlock(abi, _rules(sandbox))
            report.landlock_abi = abi
        except OSError as exc:
            report.errors.append(f"landlock: {exc}")
    report.readable_protected = self_test(sandbox.protected)
    return report


def seal(report: ContainmentReport) -> None:
    """No new processes from now on (the candidate's compilers have run)."""
    if not seccomp_supported():
        return
    try:
        _install_seccomp(_filter(platform.machine(), PROCESS_CREATION, True))
        report.sealed = True
    except OSError as exc:
        report.errors.append(f"seal: {exc}")


def self_test(protected: Iterable[str]) -> list[str]:
    """The protected paths this process can still open for reading (should be none)."""
    leaks = []
    for path in protected:
        if not path or not os.path.exists(path):
            continue
        try:
            if os.path.isdir(path):
                os.listdir(path)
            else:
                os.close(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            continue
        leaks.append(path)
    return leaks


def _rules(sandbox: Sandbox) -> list[tuple[str, int]]:
    rules: list[tuple[str, int]] = [(p, _READ_EXEC) for p in SYSTEM_READ_ROOTS]
    rules += [(p, _READ) for p in SYSTEM_INFO_ROOTS]
    # Its own /proc entry (its threads' included) is writable: the CUDA driver writes there
    # when it initialises, and nothing there reaches another process.
    rules.append((f"/proc/{os.getpid()}", _READ | _FS_WRITE_FILE | _FS_TRUNCATE))
    rules += [(p, _READ_EXEC) for p in sandbox.read_roots]
    rules += [(p, _FS_READ_FILE | _FS_WRITE_FILE) for p in _DEV_READ_WRITE]
    rules += [(p, _FS_READ_FILE) for p in _DEV_READ]
    rules += [(p, _FS_READ_FILE | _FS_WRITE_FILE | _FS_IOCTL_DEV) for p in _gpu_devices()]
    everything = _fs_rights(7) & ~(_FS_MAKE_CHAR | _FS_MAKE_BLOCK)
    rules += [("/dev/shm", everything), (sandbox.scratch, everything)]
    return rules


def _gpu_devices() -> list[str]:
    try:
        names = os.listdir("/dev")
    except OSError:
        return []
    return [f"/dev/{n}" for n in sorted(names) if n.startswith(("nvidia", "dri"))] + (
        ["/dev/dri"] if os.path.isdir("/dev/dri") else []
    )


def _set_rlimits(sandbox: Sandbox, report: ContainmentReport) -> None:
    limits = {
        "core": (resource.RLIMIT_CORE, 0),
        "fsize": (resource.RLIMIT_FSIZE, 8 << 30),
    }
    if sandbox.cpu_seconds:
        limits["cpu"] = (resource.RLIMIT_CPU, sandbox.cpu_seconds)
    if sandbox.data_bytes:
        limits["data"] = (resource.RLIMIT_DATA, sandbox.data_bytes)
    for name, (which, value) in limits.items():
        try:
            soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))
            report.rlimits[name] = value
        except (ValueError, OSError) as exc:
            report.errors.append(f"rlimit {name}: {exc}")

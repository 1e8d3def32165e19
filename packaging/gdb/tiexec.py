# gdb and programs stamped by tiexec-stamp.  Installed where gdb reads its
# system-wide start-up files (/etc/gdb/gdbinit.d on Debian and Fedora).
#
# Under the binfmt_misc rule a stamped program's exec is, to the kernel, an
# exec of tiexec, which steps aside into an unstamped copy of the program
# when it finds itself traced (interp/aside.h).  gdb inserts the
# breakpoints set before `run` at the exec it takes for the program's, which
# is tiexec's: every breakpoint outside tiexec's own image fails ("Cannot
# access memory").  Before `run` or `start` of a stamped program while the
# rule is registered:
#
# - a program with a dynamic linker or a PIE: the user's enabled
#   breakpoints are disabled, and a one-time exec catchpoint enables them
#   again at the copy's exec (where gdb has loaded the copy, the same
#   program, and relocated it) and continues;
# - a static program at a fixed address (Go's default): gdb itself inserts
#   a breakpoint into the program at start (its dynamic-linker event in
#   static glibc), which no disabling reaches; tiexec is made gdb's
#   exec-wrapper instead (`tiexec --step-aside`): it steps aside in the
#   wrapper's exec, which gdb expects, so the program's exec is the copy's.
#
# - a static PIE: gdb relocates it only if the program headers in memory
#   match its file's, and the copy's differ from the stamped file's by the
#   marker bit, so gdb could not relocate its symbols by either route;
#   gdb loads the copy as its program instead (`tiexec --aside-copy`), the
#   same program unstamped, which the kernel runs as a plain exec.  argv[0]
#   and /proc/PID/exe then name the copy.
#
# Nothing changes for other programs, or without the rule.  A session that
# sets its own exec-wrapper, or defines hook-run or hook-start, replaces
# this.
import struct
import subprocess

import gdb

RULE = "/proc/sys/fs/binfmt_misc/tiexec"
MARK_BYTE = 70  # TIEXEC_MARK_BYTE (common/mark.h): p_flags >> 16 of the first program header
MARK_BIT = 0x40  # TIEXEC_MARK_FLAG >> 16
PT_INTERP, ET_EXEC = 3, 2

_wrapper_set = False


def _interpreter():
    """The rule's interpreter while the rule is enabled, else None."""
    try:
        with open(RULE) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    if not lines or lines[0] != "enabled":
        return None
    for line in lines:
        if line.startswith("interpreter "):
            return line[len("interpreter "):]
    return None


def _kind(path):
    """None (not a stamped ELF64 program), "static" or "dynamic"."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:5] != b"\x7fELF\x02":
                return None
            e_type, = struct.unpack_from("<H", head, 16)
            e_phoff, = struct.unpack_from("<Q", head, 32)
            e_phentsize, e_phnum = struct.unpack_from("<HH", head, 54)
            f.seek(e_phoff)
            ph = f.read(e_phentsize * min(e_phnum, 256))
    except (OSError, struct.error):
        return None
    if e_phoff != 64 or e_phentsize < 56 or not ph or not (ph[MARK_BYTE - 64] & MARK_BIT):
        return None
    types = [struct.unpack_from("<I", ph, i * e_phentsize)[0] for i in range(len(ph) // e_phentsize)]
    if PT_INTERP in types:
        return "dynamic"
    return "static" if e_type == ET_EXEC else "static-pie"


def _load_copy(interp, prog):
    """gdb's program becomes tiexec's unstamped copy of prog."""
    try:
        out = subprocess.run([interp, "--aside-copy", prog], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return
    copy = out.stdout.strip()
    if out.returncode != 0 or not copy:
        gdb.write(out.stderr)
        return
    gdb.write("tiexec: a stamped static PIE: debugging its unstamped copy %s\n" % copy)
    confirm = gdb.parameter("confirm")
    gdb.execute("set confirm off", to_string=True)
    try:
        gdb.execute("file " + copy, to_string=True)
    finally:
        gdb.execute("set confirm %s" % ("on" if confirm else "off"), to_string=True)


def tiexec_before_run():
    global _wrapper_set
    if _wrapper_set:
        gdb.execute("unset exec-wrapper", to_string=True)
        _wrapper_set = False
    prog = gdb.current_progspace().filename
    interp = _interpreter()
    kind = _kind(prog) if prog and interp else None
    if kind == "static":
        if gdb.parameter("exec-wrapper") in (None, ""):
            gdb.execute("set exec-wrapper %s --step-aside" % interp, to_string=True)
            _wrapper_set = True
        return
    if kind == "static-pie":
        _load_copy(interp, prog)
        return
    if kind != "dynamic":
        return
    numbers = [b.number for b in gdb.breakpoints()
               if b.enabled and b.number > 0 and b.type in (gdb.BP_BREAKPOINT, gdb.BP_HARDWARE_BREAKPOINT)]
    if not numbers:
        return
    listed = " ".join(str(n) for n in numbers)
    gdb.execute("disable " + listed, to_string=True)
    gdb.execute("tcatch exec", to_string=True)
    catch = gdb.breakpoints()[-1]
    catch.silent = True
    catch.commands = "enable %s\ncontinue\n" % listed


gdb.execute("define hook-run\npython tiexec_before_run()\nend")
gdb.execute("define hook-start\npython tiexec_before_run()\nend")

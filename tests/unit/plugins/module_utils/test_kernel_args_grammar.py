# -*- coding: utf-8 -*-
"""gpu_host kernel arguments through the three parsers between the inventory and the kernel.

1. sh: grub-mkconfig sources the drop-in. Judged by ``sh -n`` and by sourcing it in a subshell with ``set -u`` and
   comparing every variable before and after (exactly GRUB_CMDLINE_LINUX may change).
2. GRUB's script lexer: the value is copied onto the ``linux`` line by the real ``/etc/grub.d/10_linux`` template line
   (expanded by sh in a heredoc, as 10_linux does), and GRUB's own ``grub-script-check`` (Debian package grub-common,
   tests/system-deps.sh) parses the menu entry. ``grub-script-check`` only parses: a ``;`` in an argument is valid
   syntax (a second command), so each word is also put where GRUB's grammar takes words only (``for x in WORD ;
   do``), which a word split by ``;`` ``|`` ``&`` ``<`` ``>`` ``{`` ``}`` or a ``$(`` fails; the unquoted control
   fails there, which proves the probe sees the split.
3. The kernel: GRUB's word (its single quotes removed, the SQUOTE rule of grub-core/script/yylex.l: literal up to the
   next quote) is split by a port of lib/cmdline.c ``next_arg`` (written here: no real kernel parser runs in a
   test) and must give back the argument's key and value.

The threat model this file proves part of: docs/security.md (output grammars: GRUB and sh).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from ansible_collections.ainet.fabric.plugins.module_utils.host import gpu_host_state as lib

GRUB_CHECK = shutil.which("grub-script-check")
TEN_LINUX = "/etc/grub.d/10_linux"
needs_grub = pytest.mark.skipif(not GRUB_CHECK, reason="grub-script-check is not installed (grub-common: "
                                "tests/system-deps.sh)")

# Accepted: each has a character some parser on the way would read as syntax if written bare.
HOSTILE_OK = ["memmap=12G$4G", "a=a;reboot", "b=a|b", "c=a&&b", "d=<in>out", "e={a}", "f=$(reboot)",
              "g=${prefix}", "h=*", "i=a?b[c]", "j=#c", "acpi_osi=!Linux", "k=a;b}c{d", "m=$root"]
PLAIN = ["iommu=pt", "console=ttyS0,115200n8", "crashkernel=1G-4G:192M,4G-64G:256M", "quiet",
         "vfio-pci.ids=10de:2330", "root=UUID=0a3b-ff", "x="]


def next_arg(args):
    """lib/cmdline.c next_arg (Linux): (param, val or None, rest)."""
    i, equals, in_quote, quoted = 0, 0, False, False
    if args.startswith('"'):
        args, in_quote, quoted = args[1:], True, True
    while i < len(args):
        if args[i].isspace() and not in_quote:
            break
        if equals == 0 and args[i] == "=":
            equals = i
        if args[i] == '"':
            in_quote = not in_quote
        i += 1
    word, rest = args[:i], args[i + 1:].lstrip()
    if quoted and word.endswith('"'):
        word = word[:-1]
    if not equals:
        return word, None, rest
    param, val = word[:equals], word[equals + 1:]
    if val.startswith('"'):
        val = val[1:]
        if val.endswith('"'):
            val = val[:-1]
    return param, val, rest


def kernel_params(cmdline):
    out = []
    while cmdline:
        param, val, cmdline = next_arg(cmdline)
        out.append((param, val))
    return out


def grub_words(line):
    """The words of one GRUB command line made only of bare CHARs and single-quoted strings (yylex.l CHAR, SQSTR);
    anything else (a metacharacter outside quotes, ``$``, a double quote, a backslash) raises: this reader covers
    what the renderer may write, and nothing more."""
    words, i = [], 0
    while i < len(line):
        if line[i] in " \t":
            i += 1
            continue
        word = ""
        while i < len(line) and line[i] not in " \t":
            if line[i] == "'":
                end = line.index("'", i + 1)
                word += line[i + 1:end]
                i = end + 1
            elif line[i] in "{}|&$;<>\n\"\\":
                raise ValueError("GRUB syntax %r in %r" % (line[i], line))
            else:
                word += line[i]
                i += 1
        words.append(word)
    return words


def source(dropin, tmp_path):
    """Source the drop-in in a subshell with ``set -u``: (GRUB_CMDLINE_LINUX after, {variables that changed})."""
    path = tmp_path / "60-ainet-gpu-host.cfg"
    path.write_text(dropin)
    subprocess.run(["sh", "-n", str(path)], check=True)
    script = ('set -u; GRUB_CMDLINE_LINUX="root=/dev/sda1"; set > "$2"; . "$1"; '
              'set > "$3"; printf "%s" "$GRUB_CMDLINE_LINUX"')
    before, after = tmp_path / "before", tmp_path / "after"
    out = subprocess.run(["sh", "-c", script, "sh", str(path), str(before), str(after)], check=True,
                         capture_output=True, text=True, env={"PATH": os.environ["PATH"]}).stdout
    old, new = set(before.read_text().splitlines()), set(after.read_text().splitlines())
    changed = set(line.split("=", 1)[0] for line in old ^ new)
    return out, changed


def linux_line(args):
    """The ``linux`` line 10_linux writes for ``args`` (its own template line, expanded by sh in a heredoc)."""
    template = r"	linux	${rel_dirname}/${basename} root=${linux_root_device_thisversion} ro ${args}"
    if os.path.exists(TEN_LINUX):
        found = [line for line in open(TEN_LINUX).read().splitlines()
                 if re.match(r"^\s*linux\s+\$\{rel_dirname\}/\$\{basename\} root=", line)]
        assert found, "10_linux has no linux line of the known shape"
        template = found[0]
    script = 'rel_dirname=/boot; basename=vmlinuz-6.1.0; linux_root_device_thisversion=/dev/sda1; args="$1"\n' \
             'cat << EOF\n%s\nEOF\n' % template
    return subprocess.run(["sh", "-c", script, "sh", args], check=True, capture_output=True, text=True).stdout


def grub_check(text, tmp_path):
    path = tmp_path / "grub.cfg"
    path.write_text(text)
    return subprocess.run([GRUB_CHECK, str(path)], capture_output=True, text=True, check=False).returncode


@needs_grub
@pytest.mark.parametrize("arg", HOSTILE_OK + PLAIN)
def test_an_accepted_argument_reaches_the_kernel_unchanged(arg, tmp_path):
    args = lib.check_kernel_args(["intel_iommu=on", arg])
    value, changed = source(lib.grub_dropin_text(args), tmp_path)
    assert changed == {"GRUB_CMDLINE_LINUX"}
    line = linux_line(value + " quiet")
    assert grub_check("menuentry 'Debian' {\n%s}\n" % line, tmp_path) == 0
    words = grub_words(line.strip())
    assert words[0] == "linux"
    for word in value.split()[1:]:
        assert grub_check("for x in %s ; do\n true\ndone\n" % word, tmp_path) == 0
    params = kernel_params(" ".join(words[2:]))
    key, _eq, val = arg.partition("=")
    assert params == [("root", "/dev/sda1"), ("ro", None), ("root", "/dev/sda1"), ("intel_iommu", "on"),
                      (key, val if _eq else None), ("quiet", None)]
    assert lib.missing_in_cmdline(args, " ".join(words[2:])) == []


@needs_grub
@pytest.mark.parametrize("arg", ["x=a;reboot", "x=a|b", "x=a&&b", "x=<in>out", "x={a}", "x=$(reboot)",
                                 "x=a;b}c{d"])
def test_control_the_bare_word_is_split_by_grub(arg, tmp_path):
    # what the old drop-in wrote: the probe must see this one split, or it proves nothing above
    assert grub_check("for x in %s ; do\n true\ndone\n" % arg, tmp_path) != 0
    assert grub_check("for x in %s ; do\n true\ndone\n" % lib.grub_word(arg), tmp_path) == 0


@pytest.mark.parametrize("bad", ["iommu pt", "a=b c", "a=b\tc", "a=b\nGRUB_DISABLE_OS_PROBER=false", 'x="y"',
                                 "x=it's", "x=a\\b", "x=`reboot`", "x=\x7f", "x=\u00e9", "--", "-x", "=x", "",
                                 "a;b", "$x=1", "a\n=b", "init=/bin/sh -- x"])
def test_bad_kernel_arguments_are_refused_in_one_line_naming_them(bad):
    with pytest.raises(lib.GpuHostError) as info:
        lib.check_kernel_args(["iommu=pt", bad])
    message = str(info.value)
    assert "kernel_args[1]" in message and repr(bad) in message and "\n" not in message


def test_control_plain_arguments_are_kept_bare():
    args = lib.check_kernel_args(PLAIN)
    assert lib.grub_dropin_text(args).splitlines()[1] == 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX %s"' % " ".join(PLAIN)


def test_the_drop_in_reads_back_as_written_and_is_not_taken_for_dropped(tmp_path):
    args = lib.check_kernel_args(HOSTILE_OK)
    text = lib.grub_dropin_text(args)
    assert lib.grub_dropin_args(text) == args
    grub = tmp_path / "grub"
    grub.write_text('GRUB_CMDLINE_LINUX="console=ttyS0"\n')
    ours = str(tmp_path / "60-ainet-gpu-host.cfg")
    out = subprocess.run(["sh", "-c", lib.GRUB_EVAL, "sh", ours, text, str(grub), ours], capture_output=True,
                         text=True, check=True).stdout
    steps = lib.grub_steps(out)
    assert steps[1][1] == ["console=ttyS0"] + args
    assert lib.dropped_after(steps, ours, args) is None


@pytest.mark.parametrize("arg", ["memmap=12G$4G", "x=a;b", "x=*", "x=#c"])
def test_grubby_refuses_what_grub_would_need_quoted(arg):
    with pytest.raises(lib.GpuHostError) as info:
        lib.check_grubby_args(["iommu=pt", arg])
    assert "kernel_args[1]" in str(info.value) and repr(arg) in str(info.value)
    assert lib.check_grubby_args(PLAIN) == PLAIN

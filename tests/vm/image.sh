#!/usr/bin/env bash
# Build the Debian bookworm VM image of the VM tier (issue 11), once; later runs
# reuse it while this script (and so its package list and guest config) and the
# SSH key are unchanged.
#
#   usage: tests/vm/image.sh [--force]
#
# Output under build/vm/ (never committed, /build/ is git-ignored):
#   base.raw        ext4 root filesystem image (sparse; VMs boot per-VM qcow2
#                   overlays on top of it, see vms.sh, so it stays clean)
#   vmlinuz         guest kernel       (a copy from the rootfs's /boot, for reference:
#   initrd.img      guest initramfs     the VMs boot their disk's own through GRUB, vms.sh)
#   id_ed25519      root's SSH key for the VMs (+ .pub), generated here
#   image.stamp     content hash the image was built from
#   image.info      versions inside the image (kernel, rdma-core, iproute2, ...)
#
# Guest: systemd, sshd (root login by key only), serial console on ttyS0, the
# hostname from `systemd.hostname=` and the management address from
# `ainet.mgmt=ADDR/PREFIX` on the kernel command line (systemd-networkd, NIC
# matched by driver virtio_net, no gateway: the VMs have no route out).
# Needs root, mmdebstrap and e2fsprogs; packages come from deb.debian.org.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
    echo "image.sh: must run as root (mmdebstrap and mke2fs -d keep file ownership)" >&2
    exit 1
fi
for tool in mmdebstrap mke2fs ssh-keygen sha256sum; do
    command -v "$tool" >/dev/null || { echo "image.sh: $tool is missing (apt-get install mmdebstrap e2fsprogs openssh-client)" >&2; exit 1; }
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${AINET_VM_DIR:-$ROOT/build/vm}
MIRROR=${AINET_VM_MIRROR:-http://deb.debian.org/debian}
SIZE=${AINET_VM_IMAGE_SIZE:-3G}
FORCE=0
[ "${1:-}" = "--force" ] && FORCE=1

PACKAGES=(
    systemd-sysv udev dbus openssh-server python3 iproute2 kmod iputils-ping
    ethtool pciutils rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest
    infiniband-diags linux-image-amd64 initramfs-tools
    # added: fsck for the root fs, ps/sysctl, /etc/services+protocols, tcpdump
    # for debugging rails, zstd for the initramfs, haveged-free entropy comes
    # from virtio-rng (vms.sh)
    e2fsprogs procps netbase tcpdump zstd less
    # GRUB's tools (update-grub, grub-mkconfig, grub-probe): the VMs boot through GRUB,
    # reading this disk's /boot/grub/grub.cfg (vms.sh), as a Debian GPU node does
    grub2-common
    # python3-apt: ansible.builtin.apt (doca_ofed installs DOCA-OFED and the kernel headers with it)
    python3-apt
    # dkms (with gcc, make, dpkg-dev): DOCA-OFED's DKMS package, the stand-in's, registers and installs its module
    # through the real dkms (tests/lab/doca_standin.py)
    dkms
)

now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
T_ALL=$(now)

mkdir -p "$OUT"
# A built image is also kept in a cache of this machine's, by its content hash, so a rerun from another
# checkout of the same content (CI's fresh clone) copies it instead of building it again. The SSH key is part of
# the hash, so the cache keeps the key too (a throw-away key for VMs that live in a namespace of their own).
CACHE=${AINET_TEST_CACHE:-/var/cache/ainet-fabric-tests}/vm
if [ ! -f "$OUT/id_ed25519" ] && [ -f "$CACHE/id_ed25519" ] && [ -f "$CACHE/id_ed25519.pub" ]; then
    cp "$CACHE/id_ed25519" "$CACHE/id_ed25519.pub" "$OUT/"
    echo "image: SSH key from the cache $CACHE"
fi
# The key first: its public half goes into the image, so it is part of the hash.
if [ ! -f "$OUT/id_ed25519" ]; then
    ssh-keygen -q -t ed25519 -N '' -C "ainet-vm-tier" -f "$OUT/id_ed25519"
    echo "image: generated SSH key $OUT/id_ed25519"
fi
chmod 0600 "$OUT/id_ed25519"

# The files copied into the guest from beside this script count as the script does.
GUEST_SOURCES=("$ROOT/tests/vm/ainet_vm_pyc.py" "$ROOT/tests/vm/ainet-vm-pyc.pth")
STAMP=$( { cat "${BASH_SOURCE[0]}" "${GUEST_SOURCES[@]}"; printf '%s\n' "${PACKAGES[@]}" "$MIRROR" "$SIZE"; cat "$OUT/id_ed25519.pub"; } | sha256sum | cut -c1-16)
if [ "$FORCE" = 0 ] && [ -f "$OUT/image.stamp" ] && [ "$(cat "$OUT/image.stamp")" = "$STAMP" ] \
        && [ -f "$OUT/base.raw" ] && [ -f "$OUT/vmlinuz" ] && [ -f "$OUT/initrd.img" ]; then
    echo "image: up to date ($STAMP) at $OUT/base.raw"
    exit 0
fi
if [ -n "$(pgrep -f "file=$OUT/.*\.qcow2" || true)" ]; then
    echo "image: VMs are running on the old image; run tests/vm/vms.sh down first" >&2
    exit 1
fi
FILES=(base.raw vmlinuz initrd.img image.info)
if [ "$FORCE" = 0 ] && [ -f "$CACHE/$STAMP/complete" ]; then
    T=$(now)
    for file in "${FILES[@]}"; do
        cp --sparse=always "$CACHE/$STAMP/$file" "$OUT/$file.tmp" && mv "$OUT/$file.tmp" "$OUT/$file"
    done
    echo "$STAMP" > "$OUT/image.stamp"
    echo "image: copied ($STAMP) from the cache $CACHE in $(took "$T")"
    exit 0
fi

WORK=$OUT/rootfs.tmp
rm -rf "$WORK" "$OUT/base.raw.tmp" "$OUT/image.stamp"
trap 'rm -rf "$WORK" "$OUT/base.raw.tmp"' EXIT

# --- guest files, written into the rootfs by a customize hook -------------
GUEST=$OUT/guest-files.tmp
rm -rf "$GUEST"; mkdir -p "$GUEST"
cat > "$GUEST/ainet-vm-net" <<'EOF'
#!/bin/sh
# Management network of an ainet test VM, from the kernel command line:
#   ainet.mgmt=ADDR/PREFIX   static address on the virtio-net NIC (no gateway)
set -eu
addr=
for word in $(cat /proc/cmdline); do
    case "$word" in ainet.mgmt=*) addr=${word#ainet.mgmt=} ;; esac
done
mkdir -p /run/systemd/network
if [ -z "$addr" ]; then
    echo "ainet-vm-net: no ainet.mgmt= on the kernel command line, management NIC unconfigured" >&2
    exit 0
fi
cat > /run/systemd/network/10-ainet-mgmt.network <<NET
# written at boot by /usr/local/sbin/ainet-vm-net from the kernel command line
[Match]
Driver=virtio_net

[Link]
RequiredForOnline=yes

[Network]
Address=$addr
LinkLocalAddressing=no
IPv6AcceptRA=no
NET
EOF
cat > "$GUEST/ainet-vm-net.service" <<'EOF'
[Unit]
Description=ainet VM: management network from the kernel command line
DefaultDependencies=no
Before=systemd-networkd.service network-pre.target
Wants=network-pre.target
After=systemd-remount-fs.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/ainet-vm-net

[Install]
WantedBy=sysinit.target
EOF
cat > "$GUEST/ainet-ssh-hostkey.service" <<'EOF'
[Unit]
Description=ainet VM: generate this VM's own SSH host key at first boot
Before=ssh.service
ConditionPathExists=!/etc/ssh/ssh_host_ed25519_key

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -q -t ed25519 -N "" -f /etc/ssh/ssh_host_ed25519_key

[Install]
WantedBy=multi-user.target
EOF
cat > "$GUEST/sshd-ainet.conf" <<'EOF'
PermitRootLogin prohibit-password
PasswordAuthentication no
UseDNS no
HostKey /etc/ssh/ssh_host_ed25519_key
EOF
# GRUB. The VMs boot a per-VM GRUB image (vms.sh) that sets $ainet_vm_args (console, hostname, management
# address) and reads /boot/grub/grub.cfg from this disk: first the entry below, then what update-grub in the
# guest writes from /etc/default/grub and /etc/default/grub.d/. The single quotes keep $ainet_vm_args for
# GRUB to expand at boot.
cat > "$GUEST/grub-default" <<'EOF'
# /etc/default/grub of the ainet VM tier (tests/vm/image.sh)
GRUB_DEFAULT=0
GRUB_TIMEOUT=0
GRUB_DISTRIBUTOR=Debian
GRUB_CMDLINE_LINUX_DEFAULT='$ainet_vm_args'
GRUB_CMDLINE_LINUX=""
GRUB_TERMINAL=serial
GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"
GRUB_DISABLE_RECOVERY=true
GRUB_DISABLE_OS_PROBER=true
EOF
cat > "$GUEST/grub.cfg" <<'EOF'
# The first boot's entry, written by tests/vm/image.sh; update-grub in the guest replaces this file.
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
set timeout=0
menuentry 'Debian GNU/Linux (image)' {
	search --no-floppy --label ainet-root --set=root
	linux /boot/vmlinuz-@KVER@ root=/dev/vda rw $ainet_vm_args
	initrd /boot/initrd.img-@KVER@
}
EOF
# The initramfs of the VMs' own rebuilds (gpu_host's blacklist, rdma_netns's ib_core option): what the root
# disk needs (MODULES=dep) plus the modules listed, not every driver (MODULES=most, Debian's default). A rebuild
# under TCG then takes a fraction of the time; ib_core is listed, so the initramfs carries it as MODULES=most's
# does and rdma_netns rebuilds it. The image's first initramfs is made in the chroot, where dep cannot find the
# root disk: it is made again there with the same modules named (MODULES=list: the root disk's virtio_pci,
# virtio_blk and ext4, and ib_core), from a copy of the configuration, so the image's own stays as above.
# Measured: 7 MB instead of MODULES=most's 30 MB, which GRUB reads through the BIOS at the first boot (10 s under
# TCG for the larger one).
cat > "$GUEST/ainet-vm-tier.conf" <<'EOF'
# ainet VM tier (tests/vm/image.sh): the root disk's modules and /etc/initramfs-tools/modules only
MODULES=dep
EOF
cat > "$GUEST/initramfs-modules" <<'EOF'
# ainet VM tier (tests/vm/image.sh): in the initramfs as with MODULES=most
ib_core
EOF
# The first boot's initramfs (see above): made in the chroot from a copy of /etc/initramfs-tools.
# shellcheck disable=SC2016
FIRST_INITRAMFS_HOOK='set -e
v=$(cd "$1/boot" && ls vmlinuz-* | sort -V | tail -n1); v=${v#vmlinuz-}
conf=$(mktemp -d "$1/tmp/initramfs-tools.XXXXXX")
cp -a "$1/etc/initramfs-tools/." "$conf/"
echo MODULES=list > "$conf/conf.d/zz-ainet-vm-image.conf"
printf "%s\n" virtio_pci virtio_blk ext4 >> "$conf/modules"
chroot "$1" mkinitramfs -d "${conf#"$1"}" -o "/boot/initrd.img-$v" "$v"
rm -rf "$conf"'
# The bytecode cache of zip-imported modules (ainet_vm_pyc.py: Ansible's modules are zip payloads), loaded by a .pth
# in the local site-packages directory at every python3 start; its directory root's alone.
PYC_HOOK="set -e
site=\$(chroot \"\$1\" python3 -c 'import site; print(site.getsitepackages()[0])')
mkdir -p \"\$1\$site\"
install -m 0644 $(printf %q "${GUEST_SOURCES[0]}") \"\$1\$site/ainet_vm_pyc.py\"
install -m 0644 $(printf %q "${GUEST_SOURCES[1]}") \"\$1\$site/ainet-vm-pyc.pth\"
mkdir -p -m 0700 \"\$1/var/cache/ainet-vm-pyc\""
cat > "$GUEST/fstab" <<'EOF'
/dev/vda  /  ext4  defaults,errors=remount-ro  0  1
EOF

# The VMs' Debian repository: the VMs reach no mirror (no route out of the lab), so the image carries a flat apt
# repository of real Debian packages from $MIRROR at /var/lib/ainet-vm/debian, the VMs' only apt source (file:,
# Trusted: it was fetched, signature-checked, by apt here), with its lists read. It holds what the roles install
# on the VMs from the distribution and no more: the headers meta-package of the image's kernel flavour
# (linux-headers-amd64) and the running kernel's headers (doca_ofed_headers), and a second kernel,
# linux-image-<abi>-cloud-amd64, with its headers, that the verifier unpacks to be the kernel the next boot starts
# (doca_ofed's dkms autoinstall -k). What those headers depend on (linux-headers-<abi>-common, linux-kbuild,
# the compiler package: thousands of files, minutes of dpkg under TCG) is installed in the image; the headers
# themselves and the meta-package are not: doca_ofed installs them (checked below and in the verifier).
# shellcheck disable=SC2016
DEBIAN_REPO_HOOK='set -e; export DEBIAN_FRONTEND=noninteractive
v=$(cd "$1/boot" && ls vmlinuz-* | sort -V | tail -n1); v=${v#vmlinuz-}; abi=${v%-amd64}
deps=$(chroot "$1" apt-cache depends --important "linux-headers-$v" | awk "\$1 == \"Depends:\" { print \$2 }")
chroot "$1" apt-get install --yes --no-install-recommends $deps
chroot "$1" apt-get clean
chroot "$1" apt-get install --yes --no-install-recommends --download-only linux-headers-amd64 \
    "linux-image-$abi-cloud-amd64" "linux-headers-$abi-cloud-amd64"
mkdir -p "$1/var/lib/ainet-vm/debian"
mv "$1"/var/cache/apt/archives/*.deb "$1/var/lib/ainet-vm/debian/"
chroot "$1" sh -c "cd /var/lib/ainet-vm/debian && dpkg-scanpackages --multiversion . > Packages 2>/dev/null"
rm -f "$1/etc/apt/sources.list"
printf "%s\n" "# The VM tier: real Debian packages kept in the image (tests/vm/image.sh)" "Types: deb" \
    "URIs: file:/var/lib/ainet-vm/debian" "Suites: ./" "Trusted: yes" > "$1/etc/apt/sources.list.d/ainet-vm-debian.sources"
rm -rf "$1"/var/lib/apt/lists/*
chroot "$1" apt-get update -qq
for pkg in linux-headers-amd64 "linux-headers-$v"; do
    if chroot "$1" dpkg-query -W -f "\${Status}" "$pkg" 2>/dev/null | grep -q "ok installed"; then
        echo "image: $pkg is installed in the image; doca_ofed must install it" >&2; exit 1
    fi
done
ls "$1/var/lib/ainet-vm/debian" > "$1/etc/ainet/debian-repo"'

# --- 1. rootfs -------------------------------------------------------------
T=$(now)
echo "image: mmdebstrap bookworm (${#PACKAGES[@]} packages) from $MIRROR ..."
INCLUDE=$(IFS=,; echo "${PACKAGES[*]}")
# The hooks are run by mmdebstrap with the rootfs as $1: single quotes on purpose.
# shellcheck disable=SC2016
mmdebstrap --quiet --variant=minbase --components=main --include="$INCLUDE" \
    --customize-hook="copy-in $GUEST/ainet-vm-net /usr/local/sbin" \
    --customize-hook="copy-in $GUEST/ainet-vm-net.service $GUEST/ainet-ssh-hostkey.service /etc/systemd/system" \
    --customize-hook="copy-in $GUEST/sshd-ainet.conf /etc/ssh/sshd_config.d" \
    --customize-hook="copy-in $GUEST/fstab /etc" \
    --customize-hook="copy-in $GUEST/grub-default /etc/default" \
    --customize-hook='mv "$1/etc/default/grub-default" "$1/etc/default/grub"; mkdir -p "$1/etc/default/grub.d" "$1/boot/grub"' \
    --customize-hook="copy-in $GUEST/grub.cfg /boot/grub" \
    --customize-hook='v=$(cd "$1/boot" && ls vmlinuz-* | sort -V | tail -n1); sed -i "s/@KVER@/${v#vmlinuz-}/g" "$1/boot/grub/grub.cfg"' \
    --customize-hook='chmod 0755 "$1/usr/local/sbin/ainet-vm-net"; mv "$1/etc/ssh/sshd_config.d/sshd-ainet.conf" "$1/etc/ssh/sshd_config.d/ainet.conf"' \
    --customize-hook='chroot "$1" systemctl enable systemd-networkd.service ainet-vm-net.service ainet-ssh-hostkey.service' \
    --customize-hook='chroot "$1" systemctl mask getty@tty1.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer systemd-networkd-wait-online.service' \
    --customize-hook='rm -f "$1"/etc/ssh/ssh_host_*' \
    --customize-hook='rm -f "$1/etc/hostname"; : > "$1/etc/machine-id"; rm -f "$1/var/lib/dbus/machine-id"' \
    --customize-hook='printf "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" > "$1/etc/hosts"' \
    --customize-hook="mkdir -p -m 0700 \"\$1/root/.ssh\"; install -m 0600 $OUT/id_ed25519.pub \"\$1/root/.ssh/authorized_keys\"" \
    --customize-hook="copy-in $GUEST/ainet-vm-tier.conf /etc/initramfs-tools/conf.d" \
    --customize-hook="cat $GUEST/initramfs-modules >> \"\$1/etc/initramfs-tools/modules\"" \
    --customize-hook="$FIRST_INITRAMFS_HOOK" \
    --customize-hook="$PYC_HOOK" \
    --customize-hook='mkdir -p "$1/etc/ainet"; chroot "$1" dpkg-query -W -f "\${Package} \${Version}\n" linux-image-amd64 "linux-image-*-amd64" dkms rdma-core ibverbs-providers iproute2 perftest infiniband-diags pciutils ethtool systemd openssh-server python3 > "$1/etc/ainet/image-packages"' \
    --customize-hook="$DEBIAN_REPO_HOOK" \
    --skip=cleanup/apt/lists \
    bookworm "$WORK" "$MIRROR"
echo "image: step rootfs (mmdebstrap) took $(took "$T") ($(du -sh "$WORK" | cut -f1))"

# --- 2. kernel and initramfs ----------------------------------------------
T=$(now)
KERNEL=$(find "$WORK/boot" -maxdepth 1 -name 'vmlinuz-*' | sort -V | tail -n1)
INITRD=$(find "$WORK/boot" -maxdepth 1 -name 'initrd.img-*' | sort -V | tail -n1)
if [ -z "$KERNEL" ] || [ -z "$INITRD" ]; then
    echo "image: no kernel/initrd in $WORK/boot (linux-image-amd64 / initramfs-tools missing?)" >&2
    exit 1
fi
cp "$KERNEL" "$OUT/vmlinuz.tmp" && mv "$OUT/vmlinuz.tmp" "$OUT/vmlinuz"
cp "$INITRD" "$OUT/initrd.img.tmp" && mv "$OUT/initrd.img.tmp" "$OUT/initrd.img"
{
    echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) stamp $STAMP mirror $MIRROR"
    echo "kernel $(basename "$KERNEL" | sed 's/^vmlinuz-//')"
    cat "$WORK/etc/ainet/image-packages"
    sed 's/^/debian-repo /' "$WORK/etc/ainet/debian-repo"
} > "$OUT/image.info"
echo "image: step kernel+initrd took $(took "$T") ($(basename "$KERNEL"), $(du -h "$OUT/initrd.img" | cut -f1) initrd)"

# --- 3. disk image -------------------------------------------------------
T=$(now)
mke2fs -q -t ext4 -L ainet-root -E root_owner=0:0 -d "$WORK" "$OUT/base.raw.tmp" "$SIZE"
mv "$OUT/base.raw.tmp" "$OUT/base.raw"
echo "image: step mke2fs -d took $(took "$T") ($SIZE sparse, $(du -h "$OUT/base.raw" | cut -f1) used)"

rm -rf "$WORK" "$GUEST"
echo "$STAMP" > "$OUT/image.stamp"
echo "image: built $OUT/base.raw ($STAMP) in $(took "$T_ALL")"
# Into the cache (only this build's: an older image is dropped), the key with it.
if mkdir -p "$CACHE" 2>/dev/null; then
    find "$CACHE" -mindepth 1 -maxdepth 1 -type d ! -name "$STAMP" -exec rm -rf {} +
    rm -rf "${CACHE:?}/${STAMP:?}"
    mkdir -p "$CACHE/$STAMP"
    stored=1
    cp "$OUT/id_ed25519" "$OUT/id_ed25519.pub" "$CACHE/" || stored=0
    for file in "${FILES[@]}"; do
        cp --sparse=always "$OUT/$file" "$CACHE/$STAMP/$file" || stored=0
    done
    if [ "$stored" = 1 ]; then
        touch "$CACHE/$STAMP/complete"
        chmod -R go-rwx "$CACHE"
        echo "image: kept in the cache $CACHE/$STAMP"
    else
        rm -rf "${CACHE:?}/${STAMP:?}"
        echo "image: could not keep the image in the cache $CACHE (the next clone builds it again)" >&2
    fi
fi
cat "$OUT/image.info"

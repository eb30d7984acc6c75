#!/usr/bin/env bash
# image.sh: Strait's container image, built and checked with buildah and no registry.
#
# The image is the repository's Dockerfile: FROM scratch, a static linux binary and the build
# host's CA bundle. buildah comes from Debian's packages (installed with apt-get if missing)
# and works in a throwaway store (vfs driver, chroot isolation: no overlay mounts, no
# container runtime, no daemon, no namespaces beyond chroot), so it runs inside sandboxes
# and CI as root. The result is a docker-archive under dist/ that `docker load` and
# `podman load` read; nothing is left in the system's containers storage.
# Run `scripts/image.sh help` for the commands. Progress goes to stderr; results to stdout.
set -euo pipefail

PROG=${0##*/}
# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
SELF=$(cd "$(dirname "$0")" && pwd)/${0##*/}
REPO=$(cd "$(dirname "$0")/.." && pwd)

GO=${GO:-go}
IMAGE_NAME=${IMAGE_NAME:-localhost/strait}
STRAIT_BIN=${STRAIT_BIN:-$REPO/bin/strait}
readonly CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
readonly INSTALL_LOCK=${TMPDIR:-/tmp}/strait-image-install.lock
# What the Dockerfile promises; check holds the image to it.
readonly WANT_ENTRYPOINT="/strait"
readonly WANT_CMD="run -c /etc/strait/mm2.properties"
readonly WANT_PORT="8083/tcp"

usage() {
	cat <<EOF
Usage: $PROG COMMAND

Commands:
  build    build a static linux binary for this machine's architecture (CGO_ENABLED=0,
           -trimpath, version and commit linked in), put it and $CA_BUNDLE into a
           build context, build the Dockerfile with buildah and write the image as
           dist/strait-image-VERSION-linux-ARCH.tar (docker-archive, tagged
           $IMAGE_NAME:VERSION), replacing older ones of ARCH; prints its path
  check    load that archive into a throwaway store and verify it: the config's user is
           numeric and not root, the entrypoint is [$WANT_ENTRYPOINT], the command is
           [$WANT_CMD], $WANT_PORT is exposed, the version labels are right,
           the CA bundle is the host's and readable, and 'strait version' run inside the
           image (as its user) prints exactly what the host build (\$STRAIT_BIN, default
           bin/strait from make build) prints, naming VERSION and COMMIT
  install  install buildah (and ca-certificates) with apt-get unless present; needs root.
           build and check do this themselves
  help     print this text

Environment:
  VERSION     the version to build and expect (default: git describe --tags --always --dirty)
  COMMIT      the commit (default: git rev-parse HEAD)
  GO          the go command (default go)
  STRAIT_BIN  the host build check compares with (default bin/strait)
  IMAGE_NAME  the image's name (default localhost/strait)
EOF
}

# ---- install --------------------------------------------------------------------------

# missing_packages prints the Debian packages still needed, on one line.
missing_packages() {
	local missing=()
	command -v buildah >/dev/null 2>&1 || missing+=(buildah)
	[[ -s $CA_BUNDLE ]] || missing+=(ca-certificates)
	echo "${missing[*]}"
}

cmd_install() {
	local pkgs
	pkgs=$(missing_packages)
	[[ -n $pkgs ]] || return 0
	[[ $(id -u) -eq 0 ]] || die "missing $pkgs and installing needs root: run 'sudo $SELF install' or apt-get install $pkgs"
	command -v apt-get >/dev/null 2>&1 || die "missing $pkgs and there is no apt-get: install buildah and a CA bundle at $CA_BUNDLE another way"
	# Two builds may install at once: one installs, the other waits for it.
	exec 9>"$INSTALL_LOCK"
	if command -v flock >/dev/null 2>&1; then
		flock -w 900 9 || die "waited 15 minutes for another install (lock $INSTALL_LOCK)"
	fi
	pkgs=$(missing_packages)
	if [[ -n $pkgs ]]; then
		local start=$SECONDS
		# shellcheck disable=SC2086 # pkgs is a list of words
		set -- $pkgs
		apt_install "$@"
		local log=$APT_LOG
		pkgs=$(missing_packages)
		[[ -z $pkgs ]] || die "apt-get ran, but $pkgs still missing (log: $log)"
		rm -f "$log"
		info "installed $* in $((SECONDS - start)) s"
	fi
	exec 9>&-
}

# ---- shared ---------------------------------------------------------------------------

version_and_commit() {
	if [[ -z ${VERSION:-} ]]; then
		VERSION=$(git -C "$REPO" describe --tags --always --dirty 2>/dev/null || echo dev)
	fi
	if [[ -z ${COMMIT:-} ]]; then
		COMMIT=$(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo unknown)
	fi
	ARCH=$("$GO" env GOARCH) || die "'$GO env GOARCH' failed: is Go installed and in PATH?"
	ARCHIVE=$REPO/dist/strait-image-$VERSION-linux-$ARCH.tar
}

WORK=""
STORE=()

# new_store makes a throwaway buildah store in WORK; cleanup removes it.
new_store() {
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/strait-image.XXXXXX")
	trap cleanup EXIT
	STORE=(--root "$WORK/root" --runroot "$WORK/run" --storage-driver vfs)
}

cleanup() {
	[[ -n $WORK ]] || return 0
	# buildah rm undoes any mounts of the store's containers before the tree goes.
	buildah "${STORE[@]}" rm --all >/dev/null 2>&1 || true
	rm -rf "$WORK"
}

# ---- build ----------------------------------------------------------------------------

cmd_build() {
	local start=$SECONDS
	cmd_install
	version_and_commit
	new_store
	local ctx=$WORK/context
	mkdir -p "$ctx" "$REPO/dist"

	info "building strait $VERSION for linux/$ARCH"
	# The same flags as the Makefile's release build, so the image's binary is a release binary.
	(cd "$REPO" && CGO_ENABLED=0 GOOS=linux GOARCH=$ARCH "$GO" build -trimpath \
		-ldflags "-s -w -X strait/internal/cli.buildVersion=$VERSION -X strait/internal/cli.buildCommit=$COMMIT" \
		-o "$ctx/strait" ./cmd/strait)
	cp "$CA_BUNDLE" "$ctx/ca-certificates.crt"
	chmod 0644 "$ctx/ca-certificates.crt"

	info "building the image $IMAGE_NAME:$VERSION with buildah ($(buildah --version))"
	buildah "${STORE[@]}" bud --quiet --isolation chroot --format docker \
		--build-arg "VERSION=$VERSION" --build-arg "COMMIT=$COMMIT" \
		-t "$IMAGE_NAME:$VERSION" -f "$REPO/Dockerfile" "$ctx" >/dev/null
	# One image per architecture in dist/, as make release keeps one binary per platform.
	rm -f "$REPO"/dist/strait-image-*-linux-"$ARCH".tar
	buildah "${STORE[@]}" push --quiet "$IMAGE_NAME:$VERSION" "docker-archive:$ARCHIVE:$IMAGE_NAME:$VERSION"
	info "built $ARCHIVE ($(du -h "$ARCHIVE" | cut -f1)) in $((SECONDS - start)) s; load it with: docker load -i $ARCHIVE (or podman load)"
	echo "$ARCHIVE"
}

# ---- check ----------------------------------------------------------------------------

# config_field prints one field of the container's image config with a Go template.
config_field() {
	buildah "${STORE[@]}" inspect --type container --format "$2" "$1"
}

expect() {
	local what=$1 got=$2 want=$3
	[[ $got == "$want" ]] || die "the image's $what is '$got', want '$want' (see the Dockerfile)"
}

cmd_check() {
	local start=$SECONDS
	cmd_install
	version_and_commit
	[[ -f $ARCHIVE ]] || die "no image archive $ARCHIVE: run '$PROG build' (or make image) first"
	[[ -x $STRAIT_BIN ]] || die "no host build at $STRAIT_BIN to compare with: run make build first (or set STRAIT_BIN)"
	local host
	host=$("$STRAIT_BIN" version) || die "$STRAIT_BIN version failed"
	[[ $host == "strait $VERSION (commit $COMMIT,"* ]] ||
		die "the host build $STRAIT_BIN says '$host', not version $VERSION commit $COMMIT: rebuild it with make build"

	new_store
	local ctr
	ctr=$(buildah "${STORE[@]}" from --quiet "docker-archive:$ARCHIVE")

	local user uid
	user=$(config_field "$ctr" '{{.OCIv1.Config.User}}')
	uid=${user%%:*}
	[[ $uid =~ ^[0-9]+$ ]] || die "the image's user is '$user': it must be a numeric uid[:gid] (Kubernetes' runAsNonRoot cannot check a name)"
	[[ $uid -ne 0 ]] || die "the image runs as root (user '$user'): set USER 65532:65532 in the Dockerfile"
	expect entrypoint "$(config_field "$ctr" '{{range .OCIv1.Config.Entrypoint}}{{.}} {{end}}')" "$WANT_ENTRYPOINT "
	expect command "$(config_field "$ctr" '{{range .OCIv1.Config.Cmd}}{{.}} {{end}}')" "$WANT_CMD "
	# shellcheck disable=SC2016 # a Go template, not shell
	expect "exposed ports" "$(config_field "$ctr" '{{range $p, $_ := .OCIv1.Config.ExposedPorts}}{{$p}} {{end}}')" "$WANT_PORT "
	expect "version label" "$(config_field "$ctr" '{{index .OCIv1.Config.Labels "org.opencontainers.image.version"}}')" "$VERSION"
	expect "revision label" "$(config_field "$ctr" '{{index .OCIv1.Config.Labels "org.opencontainers.image.revision"}}')" "$COMMIT"

	local root
	root=$(buildah "${STORE[@]}" mount "$ctr")
	cmp -s "$root/etc/ssl/certs/ca-certificates.crt" "$CA_BUNDLE" ||
		die "the image's /etc/ssl/certs/ca-certificates.crt is missing or not the host's $CA_BUNDLE"
	[[ $(stat -c %A "$root/etc/ssl/certs/ca-certificates.crt") == *r?? ]] ||
		die "the image's CA bundle is not readable by its user $user"
	buildah "${STORE[@]}" umount "$ctr" >/dev/null

	# buildah run takes the user from the image config, so this also proves that the binary
	# starts as that user on an empty base (it is static and needs no file but its own).
	local inside
	inside=$(buildah "${STORE[@]}" run --isolation chroot "$ctr" -- /strait version) ||
		die "'strait version' failed inside the image"
	[[ $inside == "$host" ]] || die "inside the image 'strait version' says '$inside', the host build says '$host'"

	info "image $ARCHIVE: user $user, entrypoint [$WANT_ENTRYPOINT], command [$WANT_CMD], $WANT_PORT, CA bundle; checked in $((SECONDS - start)) s"
	echo "$inside"
}

case ${1:-help} in
build) shift; [[ $# -eq 0 ]] || die "build takes no arguments"; cmd_build ;;
check) shift; [[ $# -eq 0 ]] || die "check takes no arguments"; cmd_check ;;
install) shift; [[ $# -eq 0 ]] || die "install takes no arguments"; cmd_install ;;
help | -h | --help) usage ;;
*) usage >&2; exit 2 ;;
esac

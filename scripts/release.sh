#!/bin/sh
# Builds the release binaries: static (cgo off), for linux and darwin on
# amd64 and arm64, stamped with the version and the commit, into dist/
# with their SHA-256 checksums in dist/SHA256SUMS.
#
#   scripts/release.sh v1.2.0     # or no argument: the v* tag HEAD is at
#
# `palaver version` in each binary prints the version and the commit.
set -eu
cd "$(dirname "$0")/.."

version=${1:-$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null || true)}
case $version in
v[0-9]*) ;;
"") echo "release.sh: HEAD has no v* tag: give the version, like scripts/release.sh v1.2.0" >&2; exit 2 ;;
*) echo "release.sh: the version must look like v1.2.0, not $version" >&2; exit 2 ;;
esac
revision=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "release.sh: the tree has uncommitted changes; the binaries say ${version}-dirty" >&2
	version=$version-dirty
fi

pkg=github.com/palaverhq/palaver/internal/build
rm -rf dist
mkdir dist
for os in linux darwin; do
	for arch in amd64 arm64; do
		out=dist/palaver-$version-$os-$arch
		echo "building $out" >&2
		# -buildvcs=false: the version and commit are stamped here, so a
		# tree without git (or a worktree) builds the same.
		CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false \
			-ldflags "-s -w -X $pkg.version=$version -X $pkg.revision=$revision" \
			-o "$out" ./cmd/palaver
	done
done

cd dist
if command -v sha256sum >/dev/null; then
	sha256sum palaver-* >SHA256SUMS
else
	shasum -a 256 palaver-* >SHA256SUMS
fi
cat SHA256SUMS

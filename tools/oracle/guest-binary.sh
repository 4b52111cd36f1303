# Prints a shell fragment that writes a C helper, built static here (the
# oracle's guest has no compiler), to a path in the guest: put it in a job
# between capture.sh and the snippet that runs the helper.
#   sh tools/oracle/guest-binary.sh SOURCE.c GUEST_PATH
set -e
src=$1
dst=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -static -O2 -s -o "$tmp/bin" "$src"
echo "base64 -d > $dst <<'@@BIN'"
base64 "$tmp/bin"
echo '@@BIN'
echo "chmod +x $dst"

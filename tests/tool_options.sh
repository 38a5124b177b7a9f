#!/usr/bin/env bash
# tool_options.sh FASTSTAMP - the option rule every subcommand shares: a value that is
# itself an option is a usage error (exit 2, the synopsis on stderr), "-" is a value,
# integers are digits only, and "--" ends the options.
set -uo pipefail
tool=$1
work=$(mktemp -d /tmp/fts-options.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# usage_error PATTERN CMD...: exit 2, PATTERN and the usage on stderr, nothing on stdout
usage_error() {
  local pattern=$1
  shift
  timeout 20 "$@" < /dev/null > "$work/out" 2> "$work/err"
  local rc=$?
  [ $rc -eq 2 ] || fail "'$*': exit $rc, not 2: $(cat "$work/err")"
  grep -q -- "$pattern" "$work/err" || fail "'$*': '$pattern' not on stderr: $(cat "$work/err")"
  grep -q '^usage: faststamp' "$work/err" || fail "'$*': no usage on stderr: $(cat "$work/err")"
  [ ! -s "$work/out" ] || fail "'$*' printed: $(cat "$work/out")"
}
usage_error "--history needs a value, not the option '--binary'" "$tool" convert --history --binary
usage_error "--in needs a value, not the option '--bound'" "$tool" convert --history h --in --bound
usage_error "--format needs a value, not the option '-h'" "$tool" convert --history h --format -h
usage_error "--path needs a value, not the option '--record'" "$tool" serve --path --record x
usage_error "--count needs a value, not the option '-5'" "$tool" check --count -5
for v in ' 5' '5 ' '5x' '' '+5' '0x5' $'\t5' '５'; do
  usage_error "bad --interval-ms '$v'" "$tool" serve --path "$work/clock" --interval-ms "$v"
done
usage_error "bad --count ' 200'" "$tool" check --count ' 200'
usage_error "bad --late '1x'" "$tool" check --late 1x
usage_error "bad --rate ' 5'" "$tool" tx --to 127.0.0.1:9 --rate ' 5'
usage_error "bad --duration ''" "$tool" rx --listen 127.0.0.1:0 --duration ''
usage_error "unexpected argument 'x'" "$tool" info -- x
usage_error "unexpected argument '--help'" "$tool" convert -- --help
# After "--" a word that looks like an option is a FILE.
"$tool" history -- --help > "$work/out" 2> "$work/err"
[ $? -eq 1 ] && grep -q "history: --help: No such file" "$work/err" ||
  fail "history -- --help: $(cat "$work/err")"
"$tool" history -- > "$work/out" 2> "$work/err"
[ $? -eq 2 ] && grep -q "FILE is required" "$work/err" || fail "history --: $(cat "$work/err")"
# "-" is a value (standard input), not an option; the history is checked first.
"$tool" convert --history "$work/none" --in - < /dev/null 2> "$work/err"
[ $? -eq 1 ] && grep -q "none: No such file" "$work/err" || fail "convert --in -: $(cat "$work/err")"
# A good integer still passes the parser (the usage error is then elsewhere).
usage_error "unexpected argument 'stray'" "$tool" serve --interval-ms 5 stray
echo "options: values that are options, loose integers and '--' as the rule says"

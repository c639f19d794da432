# prelude.sh - the helpers every backup/restore script shares (one copy, no duplicates).
#
# backups/scripts.ts joins this file into each script at its "# @prelude" line when it builds the
# script text that the CronJob's ConfigMap mounts (the scripts are mounted standalone: nothing is
# sourced at run time), and the tests run exactly that joined text.
#
# The generic helpers (log, die, require, oneline, latest, retention, verify_sums, count_files,
# json_escape) use only POSIX sh built-ins and coreutils (date, tr, sha256sum, rm, sync): the MinIO
# client image (ubi-micro: bash + coreutils, no sed/awk/grep/find) runs them too. The helpers of one
# family (pg_*, git_*, search request) may use what that family's image has.
# shellcheck disable=SC2034  # used by most scripts, not all
TAB=$(printf '\t')

ts() { date -u +%Y-%m-%dT%H:%M:%SZ; }
log() { printf '%s [%s] %s\n' "$(ts)" "$SCRIPT" "$*"; }
warn() { printf '%s [%s] ERROR: %s\n' "$(ts)" "$SCRIPT" "$*" >&2; }
# DIED tells an EXIT trap that the cause was already printed.
# shellcheck disable=SC2034
die() { warn "$*"; DIED=1; exit 1; }
# One line, runs of blanks squeezed (no sed: tr only).
oneline() { printf '%s' "$1" | tr -s '\r\n\t ' '    '; }
require() {
  for _v in "$@"; do
    eval "_val=\${$_v:-}"
    [ -n "$_val" ] || die "required environment variable $_v is not set"
  done
}

# true/false settings: empty means the default; any other value is refused before anything changes
# (a "yes" or "True" must not silently mean false).
bool_settings() {
  for _v in "$@"; do
    eval "_val=\${$_v:-}"
    case $_val in ''|true|false) ;; *) die "$_v must be true or false, got '$_val'; nothing was changed" ;; esac
  done
}

# A new backup: sets stamp, final (the dated folder, -<n> when that name is taken; a successful run
# renames work into it) and work (its partial folder beside it, for the script's EXIT trap to
# remove); TERM and INT end the script with 143 and 130 so that trap runs. (stamp, final and work
# are read by the backup scripts, not by the restore scripts that share this prelude.)
# Partial folders of earlier runs that were killed (kill -9, a lost pod) or stopped by a full disk before
# their trap ran are named and removed first, never one a live run writes: every backup run holds a shared
# flock on the $BACKUP_DIR folder itself (fd 7) from before it creates its partial folder until it ends (the
# kernel drops it when the process and its children are gone), and only a run that gets it exclusively,
# alone on the volume, removes them. Where the image has no flock (the mc image), a partial folder is
# removed once it is older than two days: twice the longest activeDeadlineSeconds a Job may have.
# shellcheck disable=SC2034
new_backup_folder() {
  if command -v flock > /dev/null 2>&1; then
    exec 7< "$BACKUP_DIR"
    if flock -n -x 7; then
      remove_leftovers "$BACKUP_DIR" '.partial-*' "backup run"
    else
      for _l in "$BACKUP_DIR"/.partial-*; do
        [ ! -e "$_l" ] || log "$_l is in use by a backup that is running now (or left by a killed one, then the next run that is alone on the volume removes it)"
      done
    fi
    # (no -w: busybox's flock has only -s -x -u -n; a run holds it exclusively only while it removes leftovers)
    flock -s 7 || die "could not take a shared lock on $BACKUP_DIR; nothing was changed"
  else
    _cut=$(( $(date -u +%s) - 2 * 86400 ))
    for _l in "$BACKUP_DIR"/.partial-*; do
      [ -e "$_l" ] || continue
      _m=$(date -r "$_l" +%s 2>/dev/null) || continue
      if [ "$_m" -lt "$_cut" ]; then remove_leftovers "${_l%/*}" "${_l##*/}" "backup run (more than two days old)"
      else log "$_l may belong to a backup that is running now (no flock in this image to tell); it is removed once it is two days old"; fi
    done
  fi
  stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
  final="$BACKUP_DIR/$stamp"
  _n=1
  while [ -e "$final" ]; do _n=$((_n + 1)); final="$BACKUP_DIR/$stamp-$_n"; done
  work="$BACKUP_DIR/.partial-$stamp-$$"
  trap 'exit 143' TERM
  trap 'exit 130' INT
}

# Entries of folder $1 matching the glob $2 that earlier runs left when they were killed or stopped by a
# full disk: each is named, then removed. Called only where no live run can own one (under the lock every
# run that writes such entries holds for its whole run).
remove_leftovers() { # $1 = folder, $2 = glob inside it, $3 = whose
  # shellcheck disable=SC2231  # $2 is a glob
  for _l in "$1"/$2; do
    [ -e "$_l" ] || [ -L "$_l" ] || continue
    log "removing $_l, left by an earlier $3 that did not finish"
    _out=$(rm -rf -- "$_l" 2>&1) || die "could not remove $_l (left by an earlier $3): $(oneline "$_out"); nothing was changed"
  done
}

# Moves the finished $work into place as $final, never into another folder: two backups started in
# the same second computed the same name, and a plain mv would put the second inside the first. On a
# name taken meanwhile the next free -<n> is used (final is updated; on failure publish_err says why).
# mv -T (coreutils, busybox). Not in a $(...): final must change in the script itself.
# shellcheck disable=SC2034
publish_backup_folder() {
  _base=$final; _n=1; publish_err=""
  while :; do
    if [ ! -e "$final" ]; then
      publish_err=$(mv -T -- "$work" "$final" 2>&1) && return 0
      [ -e "$final" ] || return 1
    fi
    _n=$((_n + 1)); final="$_base-$_n"
    [ "$_n" -lt 100 ] || { publish_err="no free folder name next to $_base"; return 1; }
  done
}

# A dated backup folder name as the backup scripts write it: YYYY-MM-DDTHHMMSSZ, optionally -<n>.
is_stamp() {
  case $1 in
    [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]Z) return 0 ;;
    [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]Z-*)
      case ${1#*Z-} in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac ;;
    *) return 1 ;;
  esac
}
# The backup folder a restore reads (sets src), from RESTORE_FROM: the name of a folder in $BACKUP_DIR, or
# an absolute path; empty or "latest": the newest dated folder that holds $1 (newer folders without it are
# named). A relative name is one folder name: "..", "." and "/" would read outside the backup volume.
# Globs sort by name, so the last dated folder is the newest (no ls | grep).
chosen_backup() { # $1 = a file or folder the backup must hold (empty: any dated folder)
  _from=${RESTORE_FROM:-}
  case $_from in
    ''|latest)
      src=""; _newer=""
      for _d in "$BACKUP_DIR"/*; do
        { is_stamp "${_d##*/}" && [ -d "$_d" ]; } || continue
        if [ -z "$1" ] || [ -e "$_d/$1" ] || [ -L "$_d/$1" ]; then src=$_d; _newer=""; else _newer="${_newer:+$_newer, }${_d##*/}"; fi
      done
      [ -n "$src" ] || die "no backup${1:+ holding $1} found in $BACKUP_DIR"
      [ -z "$_newer" ] || log "newer backup folders do not hold $1: $_newer"
      ;;
    /*) src=$_from ;;
    */*|.|..) die "RESTORE_FROM='$_from' must be the name of a backup folder in $BACKUP_DIR, 'latest', or an absolute path; nothing was changed" ;;
    *) src="$BACKUP_DIR/$_from" ;;
  esac
  [ -d "$src" ] || die "backup folder $src does not exist"
  log "backup folder: $src"
}

# True when the lines of $2 hold $1 as a whole line (lists kept in variables, not in files in TMPDIR).
in_lines() {
  while IFS= read -r _x; do [ "$_x" != "$1" ] || return 0; done <<EOF
$2
EOF
  return 1
}

# A setting that names one entry of a folder (a file or folder name, not a path): refused unless it is one
# plain name, so that nothing is written beside that folder.
plain_name() { # $1 = setting, $2 = its value, $3 = the folder
  case $2 in
    ''|.|..|*/*|*\\*) die "$1='$2' must be a plain name inside $3 (not empty, no '/' or '\\', not '.' or '..'); nothing was changed" ;;
  esac
}

# RETENTION_DAYS: a whole number of days, 0..RETENTION_MAX_DAYS. Refused before anything is written,
# so that no arithmetic can overflow into a cut-off in the future (which would delete every backup).
RETENTION_MAX_DAYS=36500
check_retention() {
  case ${RETENTION_DAYS:-} in
    ''|*[!0-9]*) die "RETENTION_DAYS must be a whole number of days (0 keeps everything), got '${RETENTION_DAYS:-}'" ;;
  esac
  _r=$RETENTION_DAYS
  while [ "${#_r}" -gt 1 ] && [ "${_r#0}" != "$_r" ]; do _r=${_r#0}; done
  # Compare the length first: a 20-digit number would overflow the shell's own arithmetic.
  if [ "${#_r}" -gt 6 ] || [ "$_r" -gt "$RETENTION_MAX_DAYS" ]; then
    die "RETENTION_DAYS=$RETENTION_DAYS is out of range: expected 0 to $RETENTION_MAX_DAYS days; nothing was deleted"
  fi
  RETENTION_DAYS=$_r
}
# connect_check CMD...: the first call to the server; CMD's output is left in out, its status returned.
# While that output says the connection was refused or timed out, CMD runs again every 2 s for up to
# CONNECT_WAIT_SECONDS (unset or 0: one try): a network policy engine may admit a new pod only at its
# next sync (kube-router does; seen on the e2e's real node), so a Job's first connection can be
# refused for some seconds. Other failures (authentication, a refused role) end it at once.
connect_check() {
  case ${CONNECT_WAIT_SECONDS:-0} in
    *[!0-9]*|??????*) die "CONNECT_WAIT_SECONDS must be a whole number of seconds (0 to 99999), got '${CONNECT_WAIT_SECONDS}'" ;;
  esac
  _cwait=${CONNECT_WAIT_SECONDS:-0}
  while [ "${#_cwait}" -gt 1 ] && [ "${_cwait#0}" != "$_cwait" ]; do _cwait=${_cwait#0}; done
  # date +%s counts whole seconds: one more, so that a wait is never shorter than asked (0: one try).
  _cend=$(($(date +%s) + _cwait + (_cwait > 0)))
  _ctries=1
  while :; do
    out=$("$@" 2>&1) && return 0
    _crc=$?
    case $out in
      *"Connection refused"*|*"Could not connect"*|*"No route to host"*|*"timed out"*|*"timeout expired"*) ;;
      *) return "$_crc" ;;
    esac
    [ "$(date +%s)" -lt "$_cend" ] || return "$_crc"
    log "connection refused or unreachable (try $_ctries); trying again in 2 s, for up to ${_cwait} s: $(oneline "$out")"
    _ctries=$((_ctries + 1))
    sleep 2
  done
}
# Delete dated folders in $BACKUP_DIR whose modification time is more than RETENTION_DAYS days ago. Run
# only after a successful backup. Needs date -r (coreutils, busybox).
retention() {
  check_retention
  if [ "$RETENTION_DAYS" -eq 0 ]; then
    log "retention disabled (RETENTION_DAYS=0)"
    return 0
  fi
  _now=$(date -u +%s) || die "retention: cannot read the clock"
  _cut=$((_now - RETENTION_DAYS * 86400))
  [ "$_cut" -lt "$_now" ] || die "retention: cut-off $_cut is not in the past (RETENTION_DAYS=$RETENTION_DAYS); nothing deleted"
  log "retention: deleting backups older than $RETENTION_DAYS days"
  for _old in "$BACKUP_DIR"/*; do
    [ -d "$_old" ] || continue
    is_stamp "${_old##*/}" || continue
    _m=$(date -r "$_old" +%s) || die "retention: cannot read the modification time of $_old"
    [ "$_m" -lt "$_cut" ] || continue
    log "retention: deleting $_old"
    rm -rf -- "$_old" || die "retention: could not delete $_old"
  done
}

# Checksums of a backup folder: required unless RESTORE_ALLOW_UNVERIFIED=true.
verify_sums() { # $1 = backup folder
  if [ -f "$1/SHA256SUMS" ]; then
    command -v sha256sum > /dev/null 2>&1 || die "sha256sum is not installed in this image, so the checksums of $1 cannot be verified; nothing was changed"
    _out=$(cd "$1" && sha256sum -c SHA256SUMS 2>&1) || die "checksum verification of $1 failed: $(oneline "$_out"); nothing was changed"
    log "checksums of $1 verified"
  elif [ "${RESTORE_ALLOW_UNVERIFIED:-false}" = true ]; then
    log "WARNING: $1 has no SHA256SUMS; restoring without checksum verification (RESTORE_ALLOW_UNVERIFIED=true)"
  else
    die "$1 has no SHA256SUMS, so the backup cannot be verified; nothing was changed (set RESTORE_ALLOW_UNVERIFIED=true to restore it anyway)"
  fi
}
# Write SHA256SUMS of every file under the current folder (no find).
write_sums() { # $1 = folder
  command -v sha256sum > /dev/null 2>&1 || die "sha256sum is not installed in this image, so no SHA256SUMS can be written for $1; the backup was not kept"
  _out=$( (cd "$1" && sums_of . > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS) 2>&1) || die "writing checksums in $1 failed: $(write_cause "$_out" "$1")"
}
sums_of() {
  for _f in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ -L "$_f" ]; then :
    elif [ -d "$_f" ]; then sums_of "$_f"
    elif [ -f "$_f" ]; then
      case $_f in ./SHA256SUMS|./SHA256SUMS.tmp) ;; *) sha256sum "$_f" || return 1 ;; esac
    fi
  done
}
# Flush what was written to the backup volume before it is renamed into place.
fsync_tree() { sync; }
# Number of regular files under a folder (no find).
count_files() {
  _c=0
  for _f in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ -L "$_f" ]; then :
    elif [ -d "$_f" ]; then _c=$((_c + $(count_files "$_f")))
    elif [ -f "$_f" ]; then _c=$((_c + 1))
    fi
  done
  printf '%s' "$_c"
}
# Backslash and double quote escaped for a JSON or curl-config string (no sed).
json_escape() {
  _s=$1; _o=""
  while [ -n "$_s" ]; do
    _r=${_s#?}; _ch=${_s%"$_r"}; _s=$_r
    case $_ch in \\|\") _o="$_o\\$_ch" ;; *) _o="$_o$_ch" ;; esac
  done
  printf '%s' "$_o"
}

# --- PostgreSQL family (postgres image) ---------------------------------------------------------
# shellcheck disable=SC2154
pg_fail() { # $1 = step, $2 = client output; TARGET = host:port
  case $2 in
    *"password authentication failed"*|*"no password supplied"*|*"SCRAM"*|*"authentication failed"*)
      die "$1: authentication failed for user '${PGUSER:-}' at $TARGET (check the PGPASSWORD secret). Server said: $(oneline "$2")" ;;
    *"pg_hba.conf"*)
      die "$1: access refused by pg_hba.conf for user '${PGUSER:-}' at $TARGET. Server said: $(oneline "$2")" ;;
    *"Connection refused"*|*"could not connect"*|*"could not translate host name"*|*"timeout expired"*|*"No route to host"*|*"Is the server running"*|*"server closed the connection"*)
      die "$1: PostgreSQL server unreachable at $TARGET. Client said: $(oneline "$2")" ;;
    *"No space left on device"*)
      die "$1: the disk is full (No space left on device): $(oneline "$2")" ;;
    *) die "$1 failed: $(oneline "$2")" ;;
  esac
}
# psql on the maintenance database reading SQL from stdin, so that :"var" / :'var' quoting of names works.
# pg_admin_db: template1 while a full restore has the maintenance database renamed aside.
pg_sql() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d "${pg_admin_db:-postgres}" "$@"; }
pg_db_exists() { printf '%s\n' "SELECT 1 FROM pg_database WHERE datname = :'db'" | pg_sql -v db="$1" 2>&1; }
# libpq connection string naming one database (quotes and backslashes escaped).
pg_dbconn() { printf "dbname='%s'" "$(printf '%s' "$1" | sed "s/[\\\\']/\\\\&/g")"; }
pg_drop() { printf '%s\n' 'DROP DATABASE IF EXISTS :"db" WITH (FORCE)' | pg_sql -v db="$1" 2>&1; }
# Tables of a custom-format dump (its table of contents, pg_restore --list) and of a live database.
pg_dump_tables() {
  pg_restore --list "$1" 2>/dev/null | grep -E '^[0-9]+; [0-9]+ [0-9]+ TABLE ' | grep -vcE '^[0-9]+; [0-9]+ [0-9]+ TABLE DATA ' || true
}
pg_db_tables() {
  psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$(pg_dbconn "$1")" -c "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%'" 2>&1
}
# pg_dumpall's plain SQL (stdin) read as psql reads it, so that what the restore decides from the dump is what
# psql will do with it: a line is a backslash command only outside string literals ('...', E'...'), quoted
# identifiers, dollar-quoted bodies, comments and COPY data (which runs from a COPY ... FROM stdin statement,
# ended by ";" outside parentheses and BEGIN ATOMIC bodies, to its "\." line); the target of \connect is
# read as psql reads it (-reuse-previous=, "..." dequoted, '...' with escapes, a connection string's dbname);
# \restrict mode and standard_conforming_strings are followed. awk in the C locale (bytes).
#   list: prints "db<TAB>name" for each database the feed connects to (first time; template1 left out),
#         "role<TAB>kept|set|created<TAB>name" for each ALTER ROLE ... WITH of the roles section (name as a
#         quoted identifier, line breaks written \n and \r), "bad<TAB>why" for a \connect psql would not
#         do as written, and last "end<TAB>complete" when the dump ends with pg_dumpall's end marker.
#   feed: prints the dump, without the PASSWORD of the ALTER ROLE statements of the roles that keep theirs.
pg_scan_dump() { # $1 = list | feed, $2 = roles that exist (quoted identifiers, one a line), $3 = the connecting role, $4 = RESTORE_ROLE_PASSWORDS
  PG_SCAN_ROLES=$2 PG_SCAN_ME=$3 PG_SCAN_SETPW=$4 LC_ALL=C awk -v mode="$1" '
  function reset() { sk = ""; skn = 0; depth = 0; bdepth = 0; idn = 0; i1 = i2 = i3 = i4 = ""; ar = 0; ris = rie = pws = pwe = 0 }
  function tok(t) { if (skn < 8 || substr(sk, 1, 5) == "COPY ") sk = sk (skn ? " " : "") t; skn++ }
  function gpos(p) { return gbase + p }
  function word(w, q,   lw) {
    lw = tolower(w)
    if (idn < 4 && (lw == "create" || lw == "function" || lw == "procedure" || lw == "or" || lw == "replace")) {
      if (idn == 0) i1 = substr(lw, 1, 1); else if (idn == 1) i2 = substr(lw, 1, 1); else if (idn == 2) i3 = substr(lw, 1, 1); else i4 = substr(lw, 1, 1)
    }
    idn++
    if (i1 == "c" && (i2 == "f" || i2 == "p" || (i2 == "o" && i3 == "r" && (i4 == "f" || i4 == "p"))) && depth == 0) {
      if (lw == "begin") bdepth++
      else if (lw == "case") { if (bdepth >= 1) bdepth++ }
      else if (lw == "end") { if (bdepth > 0) bdepth-- }
    }
    tok(toupper(w))
    if (globals) {
      if (skn == 1 && lw == "alter") ar = 1
      else if (ar == 1 && skn == 2) ar = (lw == "role") ? 2 : 0
      else if (ar == 2 && skn == 3) { ar = 3; ris = gpos(q); rie = gpos(q + length(w) - 1) }
      else if (ar == 3 && skn == 4) ar = (lw == "with") ? 4 : 0
      else if (ar == 4 && depth == 0 && lw == "password") { pws = gpos(q); if (substr(gtext, pws - 1, 1) == " ") pws--; ar = 5 }
      else if (ar == 5) ar = 4
    }
  }
  function other_token() { if (ar == 2 || ar == 5) ar = (ar == 5) ? 4 : 0 }
  function chr(n) { return sprintf("%c", n) }
  function dequote(s,   o, i, n, c, inq) {
    o = ""; inq = 0; n = length(s)
    for (i = 1; i <= n; i++) {
      c = substr(s, i, 1)
      if (c == DQ) { if (inq && substr(s, i + 1, 1) == DQ) { o = o DQ; i++ } else inq = !inq; continue }
      o = o c
    }
    return o
  }
  # One argument of a backslash command, as psql reads it for \connect (OT_SQLIDHACK): it ends at unquoted
  # white space or backslash; single-quoted parts lose their quotes (a doubled quote is a quote, backslash
  # escapes as in psql); double-quoted parts are dequoted like an identifier (no case folding) afterwards.
  # Sets a_ok, a_quoted, sa_rest.
  function slasharg(s,   i, n, c, raw, j, v, k) {
    sub(/^[ \t\r\f]+/, "", s)
    a_ok = 0; a_quoted = 0; sa_rest = s
    if (s == "" || substr(s, 1, 1) == BS) return ""
    raw = ""; i = 1; n = length(s)
    while (i <= n) {
      c = substr(s, i, 1)
      if (c ~ /[ \t\r\f]/ || c == BS) break
      if (c == DQ) {
        j = index(substr(s, i + 1), DQ)
        if (!j) { raw = raw substr(s, i); i = n + 1; break }
        raw = raw substr(s, i, j + 1); i += j + 1; a_quoted = 1; continue
      }
      if (c == SQ) {
        i++; a_quoted = 1
        while (i <= n) {
          c = substr(s, i, 1)
          if (c == SQ) { if (substr(s, i + 1, 1) == SQ) { raw = raw SQ; i += 2; continue } i++; break }
          if (c == BS) {
            i++; c = substr(s, i, 1)
            if (c == "n") raw = raw "\n"; else if (c == "t") raw = raw "\t"; else if (c == "b") raw = raw "\b"
            else if (c == "r") raw = raw "\r"; else if (c == "f") raw = raw "\f"
            else if (c ~ /[0-7]/) { v = 0; for (k = 0; k < 3 && substr(s, i, 1) ~ /[0-7]/; k++) { v = v * 8 + substr(s, i, 1); i++ } raw = raw chr(v); continue }
            else if (c == "x" && substr(s, i + 1, 1) ~ /[0-9A-Fa-f]/) { v = 0; i++; for (k = 0; k < 2 && substr(s, i, 1) ~ /[0-9A-Fa-f]/; k++) { v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1; i++ } raw = raw chr(v); continue }
            else raw = raw c
            i++; continue
          }
          raw = raw c; i++
        }
        continue
      }
      if (c == "`" || c == ":") a_odd = 1
      raw = raw c; i++
    }
    sa_rest = substr(s, i); a_ok = 1
    return dequote(raw)
  }
  # The dbname of a libpq connection string (key = value ..., values single-quoted or bare, a backslash escapes the next character).
  function conn_dbname(s,   i, n, key, val, c, db) {
    if (s ~ /^postgres(ql)?:\/\//) { bad("a connection URI in \\connect"); return "" }
    n = length(s); i = 1; db = cur
    while (1) {
      while (i <= n && substr(s, i, 1) ~ /[ \t\r\f\n]/) i++
      if (i > n) break
      key = ""; while (i <= n && substr(s, i, 1) !~ /[ \t\r\f\n=]/) { key = key substr(s, i, 1); i++ }
      while (i <= n && substr(s, i, 1) ~ /[ \t\r\f\n]/) i++
      if (substr(s, i, 1) != "=") { bad("a connection string psql cannot read in \\connect"); return "" }
      i++
      while (i <= n && substr(s, i, 1) ~ /[ \t\r\f\n]/) i++
      val = ""
      if (substr(s, i, 1) == SQ) {
        i++
        while (i <= n && (c = substr(s, i, 1)) != SQ) { if (c == BS) { i++; c = substr(s, i, 1) } val = val c; i++ }
        if (i > n) { bad("an unterminated quote in the connection string of \\connect"); return "" }
        i++
      } else while (i <= n && (c = substr(s, i, 1)) !~ /[ \t\r\f\n]/) { if (c == BS) { i++; c = substr(s, i, 1) } val = val c; i++ }
      if (key == "dbname") db = val
    }
    return db
  }
  function bad(m) { if (badmsg == "") badmsg = "line " NR ": " m }
  function metacmd(s,   name, rest, a, db) {
    if (match(s, /^\\[A-Za-z]+/)) { name = substr(s, 2, RLENGTH - 1); rest = substr(s, RLENGTH + 1) }
    else { name = substr(s, 2, 1); rest = substr(s, 3) }
    if (rkey != "") {
      if (name == "unrestrict") { a = slasharg(rest); if (a == rkey) rkey = "" }
      else if (name == "connect" || name == "c") bad("a \\connect psql refuses in restricted mode (after \\restrict)")
      return
    }
    if (name == "restrict") { rkey = slasharg(rest); return }
    if (name != "connect" && name != "c") return
    a_odd = 0
    a = slasharg(rest)
    if (a_ok && substr(a, 1, 16) == "-reuse-previous=") a = slasharg(sa_rest)
    if (a_odd) { bad("a \\connect argument with a variable or command substitution"); return }
    if (!a_ok || (!a_quoted && (a == "" || a == "-"))) db = cur
    else if (index(a, "=") || a ~ /^postgres(ql)?:\/\//) db = conn_dbname(a)
    else db = a
    if (badmsg != "") return
    if (db == "" || db ~ /[\n\r]/) { bad("a \\connect to a database name that is empty or has a line break"); return }
    if (globals) { globals = 0; endglobals = 1 }
    cur = db
    if (mode != "feed" && db != "template1" && !(db in seen)) { seen[db] = 1; print "db\t" db }
  }
  function enc(s,   o, i) {
    o = ""; while ((i = index(s, "\n")) > 0) { o = o substr(s, 1, i - 1) "\\n"; s = substr(s, i + 1) } s = o s
    o = ""; while ((i = index(s, "\r")) > 0) { o = o substr(s, 1, i - 1) "\\r"; s = substr(s, i + 1) } return o s
  }
  function stmt_end(   r, kind) {
    if (substr(sk, 1, 5) == "COPY " && sk ~ / FROM STDIN( |$)/) gocopy = 1
    if (sk ~ /^SET STANDARD_CONFORMING_STRINGS (TO )?(ON|TRUE)$/) stdstr = 1
    else if (sk ~ /^SET STANDARD_CONFORMING_STRINGS (TO )?(OFF|FALSE)$/) stdstr = 0
    if (globals && ar >= 4) {
      r = enc(substr(gtext, ris, rie - ris + 1))
      if (!(r in have)) kind = "created"
      else if (r == me || setpw != "true") { kind = "kept"; if (pwe) { ncut++; cs[ncut] = pws; ce[ncut] = pwe } }
      else if (pwe) kind = "set"
      else kind = "kept"
      if (mode != "feed") print "role\t" kind "\t" r
    }
    reset()
  }
  function scanline(L,   p, n, m, q, c, rest, w) {
    p = 1; n = length(L)
    while (p <= n) {
      if (st == 1 || st == 2) {
        rest = substr(L, p)
        m = (st == 1) ? index(rest, SQ) : match(rest, ESQ)
        if (!m) return
        c = substr(rest, m, 1); p += m
        if (c == BS) { p++; continue }
        if (substr(L, p, 1) == SQ) { p++; continue }
        st = 0
        if (ar == 5) { pwe = gpos(p - 1); ar = 4 }
        continue
      }
      if (st == 4) {
        m = index(substr(L, p), DQ)
        if (!m) return
        p += m
        if (substr(L, p, 1) == DQ) { p++; continue }
        st = 0
        if (ar == 2) { rie = gpos(p - 1); ar = 3 }
        continue
      }
      if (st == 3) {
        m = index(substr(L, p), dqtag)
        if (!m) return
        p += m - 1 + length(dqtag); st = 0; continue
      }
      if (st == 5) {
        rest = substr(L, p)
        if (!match(rest, /\/\*|\*\//)) return
        if (substr(rest, RSTART, 2) == "/*") cdepth++; else cdepth--
        p += RSTART + 1
        if (cdepth == 0) st = 0
        continue
      }
      rest = substr(L, p)
      if (!match(rest, SPECIAL)) return
      q = p + RSTART - 1; c = substr(L, q, 1); p = q + 1
      if (c == "-") { if (substr(L, p, 1) == "-") return; continue }
      if (c == "/") { if (substr(L, p, 1) == "*") { st = 5; cdepth = 1; p++ } continue }
      if (c == SQ) { st = stdstr ? 1 : 2; tok(SQ); continue }
      if (c == DQ) { st = 4; tok(DQ); if (ar == 2) { ris = gpos(q); if (skn != 3) ar = 0 } else other_token(); continue }
      if (c == "$") {
        if (match(substr(L, q), DQTAG)) { dqtag = substr(L, q, RLENGTH); p = q + RLENGTH; st = 3; tok("$"); other_token(); continue }
        if (match(substr(L, q), /^[$][0-9]+/)) p = q + RLENGTH
        continue
      }
      if (c == BS) {
        c = substr(L, p, 1)
        if (c == ";" || c == ":") { p++; continue }
        metacmd(substr(L, q)); return
      }
      if (c == ";") { if (depth == 0 && bdepth == 0) stmt_end(); continue }
      if (c == "(") { depth++; continue }
      if (c == ")") { if (depth > 0) depth--; continue }
      match(substr(L, q), IDENT); w = substr(L, q, RLENGTH); p = q + RLENGTH
      if (RLENGTH == 1 && substr(L, p, 1) == SQ) {
        if (w == "e" || w == "E") { st = 2; p++; tok(SQ); continue }
        if (w ~ /[bBxXnN]/) { st = 1; p++; tok(SQ); continue }
      }
      word(w, q)
    }
  }
  BEGIN {
    SQ = sprintf("%c", 39); DQ = "\""; BS = "\\"
    hi = sprintf("%c", 128) "-" sprintf("%c", 255)
    IDENT = "^[A-Za-z_" hi "][A-Za-z_0-9$" hi "]*"
    DQTAG = "^[$]([A-Za-z_" hi "][A-Za-z_0-9" hi "]*)?[$]"
    SPECIAL = "[-" SQ DQ "$;()/A-Za-z_" hi "\\\\]"
    ESQ = "[" SQ "\\\\]"
    me = ENVIRON["PG_SCAN_ME"]; setpw = ENVIRON["PG_SCAN_SETPW"]
    nr = split(ENVIRON["PG_SCAN_ROLES"], rl, "\n"); for (i = 1; i <= nr; i++) have[rl[i]] = 1
    st = 0; stdstr = 1; globals = 1; cur = "postgres"; rkey = ""; badmsg = ""; gtext = ""; ncut = 0
    reset()
  }
  {
    if (st == 6) { if ($0 == "\\.") st = 0; if (mode == "feed") print; next }
    if (globals) { gbase = length(gtext); gtext = gtext $0 "\n" }
    if (st == 0 && skn == 0 && $0 == "-- PostgreSQL database cluster dump complete") done = 1
    else if ($0 !~ /^[ \t\r]*$/ && $0 != "--") done = 0
    endglobals = 0
    scanline($0)
    if (gocopy) { gocopy = 0; st = 6 }
    if (endglobals) flush()
    else if (!globals && mode == "feed") print
  }
  function flush(   o, prev, i) {
    if (mode == "feed") {
      o = ""; prev = 1
      for (i = 1; i <= ncut; i++) { o = o substr(gtext, prev, cs[i] - prev); prev = ce[i] + 1 }
      printf "%s", o substr(gtext, prev)
    }
    gtext = ""; ncut = 0
  }
  END {
    if (globals) flush()
    if (mode != "feed") {
      if (badmsg != "") print "bad\t" badmsg
      print "end\t" ((done && st == 0) ? "complete" : "incomplete")
    }
  }
  '
}
# Comment of database $1 set to $2 (empty: none); best effort, it only labels the database.
pg_set_comment() {
  if [ -n "$2" ]; then printf '%s\n' "COMMENT ON DATABASE :\"db\" IS :'c'" | pg_sql -v db="$1" -v c="$2" > /dev/null 2>&1 || true
  else printf '%s\n' 'COMMENT ON DATABASE :"db" IS NULL' | pg_sql -v db="$1" > /dev/null 2>&1 || true; fi
}
# The comment a restore gives a database it keeps on the side: by it a later run finds what a killed run
# left (pg_leftovers), whatever the names; a database a user named like one is not taken for one.
pg_label() { # $1 = aside | scratch, $2 = the database it stands for
  if [ "$1" = aside ]; then printf "holds the original of '%s', renamed aside by %s pid %s at %s" "$(oneline "$2")" "$SCRIPT" "$$" "$(ts)"
  else printf "scratch copy of the backup of '%s', made by %s pid %s at %s; not the live data" "$(oneline "$2")" "$SCRIPT" "$$" "$(ts)"; fi
}
pg_leftovers() {
  printf '%s\n' "SELECT string_agg(quote_literal(datname) || ' (' || split_part(d, E'\\n', 1) || ')', ', ' ORDER BY datname) FROM (SELECT datname, shobj_description(oid, 'pg_database') AS d FROM pg_database) x WHERE d LIKE 'holds the original of %, renamed aside by %-restore pid % at %' OR d LIKE 'scratch copy of the backup of %, made by %-restore pid % at %'" | pg_sql 2>&1
}
# $1 when no database has that name, else $1_2, $1_3, ...: a database named like a restore's is never taken.
pg_free_name() {
  _fn=$1; _k=1
  while :; do
    _e=$(pg_db_exists "$_fn") || { printf '%s' "$_e"; return 1; }
    [ -n "$_e" ] || { printf '%s' "$_fn"; return 0; }
    _k=$((_k + 1)); _fn="${1}_$_k"
  done
}
# Rename database $1 to $2 and set its comment in the same transaction, so that a run killed at any point
# leaves no copy without its label (its sessions are ended first; retried while new ones arrive).
# $3 = the comment it carries afterwards (empty: none). $4 = aside: $3, then its own comment on the next
# lines (kept for the way back); $4 = back: its own comment again (what follows the first line).
pg_rename() {
  case ${4:-} in
    aside) _csql="SELECT :'c' || coalesce(E'\\n' || shobj_description(oid, 'pg_database'), '') AS c FROM pg_database WHERE datname = :'to' \\gset" ;;
    back) _csql="SELECT CASE WHEN strpos(d, E'\\n') > 0 THEN substr(d, strpos(d, E'\\n') + 1) ELSE '' END AS c FROM (SELECT coalesce(shobj_description(oid, 'pg_database'), '') AS d FROM pg_database WHERE datname = :'to') x \\gset" ;;
    *) _csql="" ;;
  esac
  _i=0
  while :; do
    _out=$(printf '%s\n' "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :'from' AND pid <> pg_backend_pid();" \
      'BEGIN;' 'ALTER DATABASE :"from" RENAME TO :"to";' "$_csql" "COMMENT ON DATABASE :\"to\" IS :'c';" 'COMMIT;' \
      | pg_sql -v from="$1" -v to="$2" -v c="$3" 2>&1) && return 0
    _i=$((_i + 1))
    [ "$_i" -lt 10 ] || { printf '%s' "$_out"; return 1; }
    sleep 1
  done
}
# Replace database $1 by the custom-format dump $6 (owner $2, encoding $3, collate $4, ctype $5), verified first:
# the dump's table of contents is read, the dump is loaded into a scratch database in one transaction and its
# tables are counted against the dump; only then the scratch database takes the live one's name (the live one
# is renamed aside and dropped after the swap). Any failure before the swap leaves the live database untouched.
# An existing database is refused unless RESTORE_DROP_EXISTING=true.
pg_restore_verified() {
  _db=$1; _owner=$2; _dump=$6
  _list=$(pg_restore --list "$_dump" 2>&1) || die "the dump $_dump is unreadable (pg_restore --list): $(oneline "$_list"); nothing was changed"
  _want=$(pg_dump_tables "$_dump")
  _live=$(pg_db_exists "$_db") || pg_fail "checking database '$_db'" "$_live"
  if [ -n "$_live" ] && [ "${RESTORE_DROP_EXISTING:-false}" != true ]; then
    die "database '$_db' already exists on $TARGET; nothing was changed (set RESTORE_DROP_EXISTING=true to replace it after the backup is verified)"
  fi
  _stamp="$(date -u +%Y%m%d%H%M%S)_$$"
  _scratch=$(pg_free_name "restore_${_stamp}") || pg_fail "choosing a name for the scratch database" "$_scratch"
  log "creating empty database '$_db' (owner $_owner, encoding $3, template0) as scratch database '$_scratch'"
  _out=$(printf '%s\n' "CREATE DATABASE :\"db\" WITH OWNER :\"owner\" TEMPLATE template0 ENCODING :'enc' LC_COLLATE :'coll' LC_CTYPE :'ctype'" \
    | pg_sql -v db="$_scratch" -v owner="$_owner" -v enc="$3" -v coll="$4" -v ctype="$5" 2>&1) \
    || pg_fail "creating the scratch database for '$_db' (does role '$_owner' exist? restore the full dump first); '$_db' is untouched" "$_out"
  pg_set_comment "$_scratch" "$(pg_label scratch "$_db")"
  log "verifying: loading the dump into '$_scratch' (pg_restore, single transaction)"
  if ! _out=$(pg_restore --exit-on-error --single-transaction -d "$(pg_dbconn "$_scratch")" "$_dump" 2>&1); then
    pg_drop "$_scratch" > /dev/null || true
    pg_fail "loading the dump of '$_db' into the scratch database (dropped again; '$_db' is untouched)" "$_out"
  fi
  _got=$(pg_db_tables "$_scratch") || { pg_drop "$_scratch" > /dev/null || true; pg_fail "counting the tables of '$_scratch'" "$_got"; }
  if [ "$_got" -lt "$_want" ]; then
    pg_drop "$_scratch" > /dev/null || true
    die "check failed: the restored copy has $_got tables, the dump lists $_want; '$_db' is untouched"
  fi
  log "verified: $_got tables restored ($_want in the dump)"
  # The comment of the live database (database metadata, not in a pg_dump -Fc dump) stays with the name.
  _ocomment=$(printf '%s\n' "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = :'db'" | pg_sql -v db="$_db" 2>/dev/null) || _ocomment=""
  if [ -z "$_live" ]; then
    _out=$(pg_rename "$_scratch" "$_db" "") || { pg_drop "$_scratch" > /dev/null || true; pg_fail "renaming '$_scratch' to '$_db'" "$_out"; }
  else
    _aside=$(pg_free_name "pre_restore_${_stamp}") || { pg_drop "$_scratch" > /dev/null || true; pg_fail "choosing a name for the live copy" "$_aside"; }
    log "replacing '$_db' (RESTORE_DROP_EXISTING=true): live copy renamed to '$_aside', verified copy renamed to '$_db'"
    _out=$(pg_rename "$_db" "$_aside" "$(pg_label aside "$_db")" aside) || { pg_drop "$_scratch" > /dev/null || true; pg_fail "renaming the live '$_db' aside (it is unchanged)" "$_out"; }
    if ! _out=$(pg_rename "$_scratch" "$_db" "$_ocomment"); then
      pg_rename "$_aside" "$_db" "" back > /dev/null || die "renaming '$_scratch' to '$_db' failed and the live copy could not be renamed back: it is '$_aside' now: $(oneline "$_out")"
      pg_drop "$_scratch" > /dev/null || true
      pg_fail "renaming the verified copy to '$_db' (the live copy was put back)" "$_out"
    fi
    _out=$(pg_drop "$_aside") || log "WARNING: the previous copy '$_aside' could not be dropped ($(oneline "$_out")); drop it by hand"
  fi
}

# One backup or restore at a time per PostgreSQL server: an advisory lock (key PG_LOCK_KEY) held by one
# session that stays open for the script's whole run (psql reading from a FIFO on fd 8). When the script
# ends or is killed, fd 8 closes, psql ends, and the server releases the lock; a lost pod's connection is
# dropped by the server, so no stale lock outlives its run. Restores take it exclusively in template1
# (the full restore renames "postgres" aside, which ends the sessions in it); backups take it shared in
# their maintenance database, so that backups can overlap each other but never a restore. Advisory locks
# are per database, so each side also looks for the other's lock in pg_locks (cluster-wide) after taking
# its own: of a backup and a restore started together at least one sees the other and refuses.
# $1 = exclusive | shared. Refuses, naming the session(s) that hold it, while another run holds it.
PG_LOCK_KEY="738301, 83"
pg_lock() {
  if [ "$1" = exclusive ]; then _lkdb=template1; _lkfn=pg_try_advisory_lock; _lkother="true"
  else _lkdb=${PGDATABASE:-postgres}; _lkfn=pg_try_advisory_lock_shared; _lkother="l.mode = 'ExclusiveLock'"; fi
  temp_folder "taking the $1 lock of $TARGET"
  _lk=$tmpd
  _out=$(mkfifo "$_lk/in" 2>&1) || { rm -rf -- "$_lk"; die "taking the $1 lock of $TARGET: mkfifo failed: $(write_cause "$_out" "${TMPDIR:-/tmp}")"; }
  PGAPPNAME="$SCRIPT pid $$ $(uname -n 2>/dev/null)" psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$_lkdb" < "$_lk/in" > "$_lk/out" 2> "$_lk/err" 7<&- &
  pg_lock_pid=$!
  exec 8> "$_lk/in"
  printf '%s\n' "SELECT CASE WHEN $_lkfn($PG_LOCK_KEY) THEN 'granted' ELSE 'busy' END || E'\\t' || coalesce((SELECT string_agg(coalesce(nullif(a.application_name, ''), 'a session without application_name') || ' (server pid ' || a.pid || ', client ' || coalesce(host(a.client_addr), 'local socket') || ', connected since ' || to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC)', '; ' ORDER BY a.backend_start) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND (l.classid, l.objid, l.objsubid) = ($PG_LOCK_KEY, 2) AND l.granted AND l.pid <> pg_backend_pid() AND $_lkother), '');" >&8
  _i=0
  while [ ! -s "$_lk/out" ]; do
    kill -0 "$pg_lock_pid" 2>/dev/null || { _e=$(cat "$_lk/err"); rm -rf -- "$_lk"; pg_fail "taking the $1 lock of $TARGET (one backup or restore at a time)" "$_e"; }
    _i=$((_i + 1)); [ "$_i" -lt 600 ] || { rm -rf -- "$_lk"; die "taking the $1 lock of $TARGET: no answer within 60 s"; }
    sleep 0.1
  done
  sleep 0.1
  _ans=$(cat "$_lk/out"); rm -rf -- "$_lk"
  case $_ans in
    "granted$TAB") log "holding the $1 lock of $TARGET (one restore at a time; backups only while no restore runs)" ;;
    *) _who=${_ans#*"$TAB"}
       die "another backup or restore of PostgreSQL at $TARGET is running, held by: ${_who:-a session that ended just now, try again}; nothing was changed" ;;
  esac
}

# One restore at a time per file store (Redis data folder, SQLite folder): flock on a lock file in the
# store's folder, on fd 9 (or $3) for the script's whole run. The kernel drops it when the process ends or is
# killed, so no stale lock outlives its run. The holder writes who it is into the file; a refusal names it.
store_lock() { # $1 = lock file, $2 = what it guards, $3 = file descriptor (default 9)
  command -v flock > /dev/null 2>&1 || die "flock is not installed in this image, so this run cannot make sure no other restore of $2 runs; nothing was changed"
  _out=$( { : >> "$1"; } 2>&1) || die "cannot create the lock file $1: $(write_cause "$_out" "${1%/*}"); nothing was changed"
  eval "exec ${3:-9}>> \"\$1\""
  if ! flock -n "${3:-9}"; then
    _who=$(cat "$1" 2>/dev/null) || true
    die "another backup or restore of $2 is running (lock $1 held by: ${_who:-a run that is just starting}); nothing was changed"
  fi
  printf '%s pid %s on %s, started %s\n' "$SCRIPT" "$$" "$(uname -n 2>/dev/null || echo an unknown host)" "$(ts)" 2> /dev/null > "$1" || true
}
# The real path of an existing folder (symbolic links resolved); empty when it does not exist.
real_dir() { (cd -- "$1" 2> /dev/null && pwd -P) || true; }
# True when real path $1 is real path $2 or inside it.
inside() { [ "$2" = / ] || [ "$1" = "$2" ] || case $1 in "$2"/*) true ;; *) false ;; esac; }

# A name for a kept copy that does not exist yet: $1.before-restore-<stamp>, then -2, -3 ... when taken
# (for every suffix in $2..., e.g. "" -wal -shm). Sets aside_base; never reuses a name, so an earlier
# kept copy is never overwritten (and mv never moves a folder into an existing one).
free_aside_name() { # $1 = path, $2... = suffixes
  _p=$1; shift
  _b="$_p.before-restore-$(date -u +%Y-%m-%dT%H%M%SZ)"; aside_base=$_b; _n=1
  while :; do
    _taken=""
    for _s in "$@"; do if [ -e "$aside_base$_s" ] || [ -L "$aside_base$_s" ]; then _taken=y; fi; done
    [ -n "$_taken" ] || return 0
    _n=$((_n + 1)); aside_base="$_b-$_n"
  done
}
# mv that never overwrites or moves into an existing folder (mv -T -n, then checked).
move_aside() { # $1 = from, $2 = to
  if [ -e "$2" ] || [ -L "$2" ]; then die "$2 already exists; it is never overwritten; nothing more was changed"; fi
  _out=$(mv -T -- "$1" "$2" 2>&1) || die "moving $1 aside to $2 failed: $(oneline "$_out")"
}

# A private temporary folder in TMPDIR (sets tmpd; the caller removes it). A full or read-only TMPDIR is
# named before anything is changed (a folder can still be made on a full disk, so one block is written).
temp_folder() { # $1 = what it is for
  _t=${TMPDIR:-/tmp}
  tmpd=$(mktemp -d 2>&1) || die "$1: cannot create a temporary folder in $_t: $(write_cause "$tmpd" "$_t"); nothing was changed"
  _out=$( { head -c 4096 /dev/zero > "$tmpd/.probe"; } 2>&1) || { rm -rf -- "$tmpd"; die "$1: cannot write to $_t: $(write_cause "$_out" "$_t"); nothing was changed"; }
  rm -f -- "$tmpd/.probe"
}

# The cause of a failed write to a file: disk full, read-only, or what the writer said.
write_cause() { # $1 = output of the failed command, $2 = folder written to
  case $1 in
    *"No space left"*|*"database or disk is full"*) printf 'the disk is full (No space left on device) at %s' "$2" ;;
    *"Read-only file system"*) printf '%s is read-only' "$2" ;;
    *"Permission denied"*) printf 'permission denied writing to %s' "$2" ;;
    '') _free=$(df -Pk "$2" 2>/dev/null | tail -n 1 | tr -s ' ' | cut -d' ' -f4)
        printf 'no message from the tool (free space at %s: %s KiB)' "$2" "${_free:-unknown}" ;;
    *) oneline "$1" ;;
  esac
}

# --- git family (alpine/git: busybox sed) ---------------------------------------------------------
mask() { printf '%s' "$1" | sed -E 's#^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@#\1***@#'; }
# The mirror's folder for a URL: scheme and user info stripped. In a URL (scheme://) host:port is the
# host (port kept as host_port: another server); without a scheme, scp-like [user@]host:path is host/path.
mirror_path() {
  case $1 in
    [a-zA-Z]*://*) printf '%s' "$1" | sed -E 's#^[a-zA-Z][a-zA-Z0-9+.-]*://##; s#^[^/@]*@##; s#^([^/:]+):([0-9]+)(/|$)#\1_\2\3#; s#^([^/:]+):(/|$)#\1\2#; s#^/+##; s#/+$##' ;;
    *) printf '%s' "$1" | sed -E 's#^[^/@:]*@##; s#^([^/:]+):#\1/#; s#^/+##; s#/+$##' ;;
  esac
}
# The mirror's path in BACKUP_DIR for a repository URL (sets rel, ending in .git); false when it would leave
# the backup volume (a ".." or "." part).
mirror_rel() {
  rel=$(mirror_path "$1")
  case $rel in *.git) ;; *) rel="$rel.git" ;; esac
  case "/$rel/" in *"/../"*|*"/./"*|"/.git/") return 1 ;; esac
}
# False for an http(s) or ftp(s) URL with a user name or password in it: git keeps the URL it clones in the
# mirror's config file, and the setting itself is plain text in the job's environment; the credentials come
# from GIT_USERNAME and the GIT_PASSWORD Secret instead. (An ssh URL's login user is no secret.)
url_without_credentials() {
  case $1 in
    [hH][tT][tT][pP]://*|[hH][tT][tT][pP][sS]://*|[fF][tT][pP]://*|[fF][tT][pP][sS]://*)
      _a=${1#*://}; _a=${_a%%/*}
      case $_a in *@*) return 1 ;; esac ;;
  esac
  return 0
}
# The URL without its user information.
strip_userinfo() { _r=${1#*://}; _a=${_r%%/*}; printf '%s://%s%s' "${1%%://*}" "${_a##*@}" "${_r#"$_a"}"; }
git_auth() {
  # The helper is shell code run by git; it expands the variables itself, so no secret is on argv.
  # shellcheck disable=SC2016
  git -c credential.helper= \
      -c 'credential.helper=!f() { test "$1" = get || exit 0; [ -n "${GIT_PASSWORD:-}" ] || exit 0; echo "username=${GIT_USERNAME:-git}"; echo "password=${GIT_PASSWORD}"; }; f' \
      "$@"
}

# ls-remote output as "object refname" lines (peeled tags left out).
remote_refs() { printf '%s\n' "$1" | grep -v '\^{}$' | tr '\t' ' ' | grep . || true; }
# Two lists of "object refname" lines joined by ref name, compared as text (awk ==, never a pattern):
# "new ref obj" for refs of $1 that $2 lacks, "moved ref obj other" for refs both have at other objects,
# "extra ref other" for refs of $2 that $1 lacks.
ref_join() {
  { printf '%s\n' "$1"; echo --; printf '%s\n' "$2"; } | awk '
    $0 == "--" { second = 1; next }
    NF < 2 { next }
    !second { a[$2] = $1; ao[++n] = $2; next }
    { b[$2] = $1; bo[++m] = $2 }
    END {
      for (i = 1; i <= n; i++) { r = ao[i]; if (!(r in b)) print "new", r, a[r]; else if (b[r] != a[r]) print "moved", r, a[r], b[r] }
      for (i = 1; i <= m; i++) { r = bo[i]; if (!(r in a)) print "extra", r, b[r] }
    }'
}

# --- MinIO client family (mc image: no sed/awk/grep/find) -----------------------------------------
mc_fail() { # $1 = step, $2 = output
  case $2 in
    *"Access Key Id you provided does not exist"*|*"signature we calculated does not match"*|*"SignatureDoesNotMatch"*|*"InvalidAccessKeyId"*|*"Access Denied"*|*"AccessDenied"*)
      die "$1: authentication failed at $OBJECTSTORE_URL (check the OBJECTSTORE_ACCESS_KEY / OBJECTSTORE_SECRET_KEY secret): $(oneline "$2")" ;;
    *"connection refused"*|*"no such host"*|*"i/o timeout"*|*"dial tcp"*|*"Server not initialized"*|*"network is unreachable"*)
      die "$1: object store unreachable at $OBJECTSTORE_URL: $(oneline "$2")" ;;
    *"NoSuchBucket"*|*"does not exist"*)
      die "$1: bucket not found: $(oneline "$2")" ;;
    *"No space left"*)
      die "$1: the disk is full (No space left on device): $(oneline "$2")" ;;
    *) die "$1 failed: $(oneline "$2")" ;;
  esac
}

# --- search engine family (curl image: busybox sed) -----------------------------------------------
masked_url() { printf '%s' "$SEARCH_URL" | sed 's#//[^/@]*@#//***@#'; }
json_field() { sed -n "s/.*\"$1\" *: *\"\\([^\"]*\\)\".*/\\1/p" "$2" | head -n 1; }
# shellcheck disable=SC2154
request() { # $1 = method, $2 = path, $3 = body; uses tmp, resp, STEP, TIMEOUT; sets code
  _body=${3:-}
  {
    if [ -n "${SEARCH_PASSWORD:-}" ]; then
      printf 'user = "%s"\n' "$(json_escape "${SEARCH_USERNAME:-elastic}:$SEARCH_PASSWORD")"
    fi
    [ -n "${SEARCH_CA_CERT:-}" ] && printf 'cacert = "%s"\n' "$(json_escape "$SEARCH_CA_CERT")"
    [ -n "$_body" ] && printf 'data-binary = "%s"\n' "$(json_escape "$_body")"
    printf 'url = "%s"\n' "$(json_escape "${SEARCH_URL%/}$2")"
  } > "$tmp/curl.cfg"
  rc=0
  code=$(curl -sS -K - -X "$1" -H 'Content-Type: application/json' --max-time "$TIMEOUT" -o "$resp" -w '%{http_code}' < "$tmp/curl.cfg" 2> "$tmp/err") || rc=$?
  rm -f "$tmp/curl.cfg"
  if [ "$rc" -ne 0 ]; then
    case $rc in
      6|7) die "$STEP: search engine unreachable at $(masked_url) (curl exit $rc: $(oneline "$(cat "$tmp/err")"))" ;;
      28) die "$STEP: no answer from $(masked_url) within ${TIMEOUT}s (SEARCH_TIMEOUT)" ;;
      35|51|58|60|77|83) die "$STEP: TLS problem talking to $(masked_url) (curl exit $rc; set SEARCH_CA_CERT?): $(oneline "$(cat "$tmp/err")")" ;;
      *) die "$STEP: request to $(masked_url) failed (curl exit $rc: $(oneline "$(cat "$tmp/err")"))" ;;
    esac
  fi
}
# shellcheck disable=SC2154
http_fail() {
  _type=$(json_field type "$resp"); _reason=$(json_field reason "$resp")
  case $code in
    401) die "$STEP: authentication failed at $(masked_url) as user '${SEARCH_USERNAME:-elastic}' (HTTP 401; check the SEARCH_PASSWORD secret)" ;;
    403) die "$STEP: user '${SEARCH_USERNAME:-elastic}' is not allowed to do this (HTTP 403 ${_type}: ${_reason})" ;;
    *)
      case $_reason in *"open index with same name already exists"*)
        die "$STEP failed: HTTP $code ${_type}: ${_reason} -- delete or close that index first, then run the restore again" ;;
      esac
      die "$STEP failed: HTTP $code ${_type:-}${_reason:+: $_reason}" ;;
  esac
}

# store_db.sh — edits of a tesseld database behind the daemon's back, shared by the
# integration scripts (sourced: lib.sh sources it, and cli_remote.sh, which runs
# without lib.sh's gRPC client). Uses $PY (python3 with its sqlite3 module).

# set_stale DB FP 0|1 — plan FP's stale flag in database DB, as a new profile or a
# cost-model upgrade sets it
set_stale() {
    "${PY:-python3}" -c 'import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute("UPDATE plans SET stale = ? WHERE fingerprint = ?", (int(sys.argv[3]), sys.argv[2])); d.commit()' "$1" "$2" "$3"
}

#!/usr/bin/env bash
# make restore BACKUP=file.dump: restore a `make backup` file into DATABASE_URL, replacing what is there,
# in one transaction (a failed restore leaves the database as it was).
set -euo pipefail
: "${DATABASE_URL:?set DATABASE_URL to the PostgreSQL database to restore into}"
file="${1:?usage: make restore BACKUP=path/to/file.dump}"
[ -f "$file" ] || { echo "restore: $file: no such file" >&2; exit 2; }
pg_restore --clean --if-exists --no-owner --no-privileges --exit-on-error --single-transaction \
  --dbname="$DATABASE_URL" "$file"
echo "restored $file"

#!/usr/bin/env bash
# make backup [BACKUP=file.dump]: a pg_dump (custom format) of DATABASE_URL; prints the file written.
set -euo pipefail
: "${DATABASE_URL:?set DATABASE_URL to the PostgreSQL database to back up}"
case "$DATABASE_URL" in postgres://*|postgresql://*) ;; *) echo "backup: DATABASE_URL is not PostgreSQL" >&2; exit 2 ;; esac
file="${1:-var/backups/gpuledger-$(date -u +%Y%m%dT%H%M%SZ).dump}"
mkdir -p "$(dirname "$file")"
pg_dump --format=custom --no-owner --no-privileges --dbname="$DATABASE_URL" --file="$file.partial"
mv "$file.partial" "$file"  # never leave a truncated file under the final name
echo "$file"

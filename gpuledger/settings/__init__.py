"""gpuledger's settings: `base` (shared, from the environment), `local` (manage.py's default) and
`production` (named in DJANGO_SETTINGS_MODULE wherever the site is served to others)."""

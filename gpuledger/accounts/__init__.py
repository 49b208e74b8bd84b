"""Accounts: teams, team membership, per-user API tokens, sign-in throttling and the role groups."""

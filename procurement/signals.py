"""Signals procurement's services send and its tasks listen to, so that services never import tasks
(tasks call services, one way)."""

from django.dispatch import Signal

# Change events whose notification should be queued now: sent once the transaction that stored them
# (and their outbox rows) commits, and by the sweep for rows still pending. Receivers get ``event_ids``.
# procurement.tasks queues one notification task per chunk; a receiver's error reaches the sender.
change_events_pending = Signal()

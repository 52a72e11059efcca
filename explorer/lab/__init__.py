"""The Lab's UI side: its settings form (config), the runs in background workers (runs), the runs' records (record)."""

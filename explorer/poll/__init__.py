"""The class poll: the stores' rules (base), the store a server uses (store), Redis (redis_store), the views (view)."""

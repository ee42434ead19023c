"""The HTTP API under /api/v1, one router per group of routes (runs, datasets, definitions,
the dashboard's read views, incidents, keys, webhooks), each declared at module level and
taking the service's state by dependency (`context`). `openlaketx.service.app` builds the app
from them."""

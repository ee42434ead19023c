"""The service (`laketx serve`): one process holding a warm SparkSession, serving the HTTP API
and running the scheduler, through the same `Lakehouse` facade as the CLI."""

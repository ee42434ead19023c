"""Job planning, dataset steps, run lifecycle logging."""

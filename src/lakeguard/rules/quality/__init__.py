"""Quality: rules compiled to SQL, single-pass evaluation, outcomes, quarantine flags."""

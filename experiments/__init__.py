"""What users run on top of the model: gap analysis, the clairvoyant bound, campaigns,
the results store, reports, terminal tables and the ``gpusched`` command."""

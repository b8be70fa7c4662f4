"""The gate on a CI host, written once against the port (:mod:`ragaliq.forge`)."""

"""A small real service instance for SCIs to dispatch to: ``catsctl service-instance``."""

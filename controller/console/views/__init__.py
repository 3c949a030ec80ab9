"""The console's blueprints, one per page group. Views read and act through the C-PS client
(:func:`controller.console.auth.cps`), shape with :mod:`controller.console.pages`, render."""

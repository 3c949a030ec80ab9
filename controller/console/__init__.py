"""The operator console (``catsctl console``): a Flask application, a client of the C-PS's own
RESTCONF northbound, so everything it shows or does passes the C-PS's validation and access
control as the logged-in operator. ``controller.console.app.create_app`` builds it; this
package's root imports nothing, so the command line stays light."""

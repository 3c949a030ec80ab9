"""cats-controller-admin: commit history, rollback, compare, commit with comment, audit."""

from controller.admin.service import Admin, ConfirmedCommit, ConfirmRequest, register

__all__ = ["Admin", "ConfirmRequest", "ConfirmedCommit", "register"]

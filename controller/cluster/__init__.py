"""The C-PS cluster: replicas of ``catsctl serve`` sharing their configuration through etcd.

The datastore core knows nothing of etcd: it commits through the
:class:`~controller.datastore.replication.Replication` seam, which
:class:`~controller.cluster.replication.EtcdReplication` implements here (docs/cluster.md).
"""

package policy

// ShouldReplicateTopic is MirrorSourceConnector's topic predicate for the flow
// source->targetAlias (spec §3.4), used for data, topic creation, config sync and ACL sync
// alike (§5):
//
//	(topics.Accepts(t) || (heartbeatsReplication && p.IsHeartbeatsTopic(t))) &&
//	!p.IsInternalTopic(t) && !IsCycle(p, targetAlias, t)
//
// Heartbeats topics are therefore replicated even when the topic filter excludes them, unless
// heartbeats.replication.enabled (heartbeatsReplication) is false. A nil filter accepts
// nothing.
func ShouldReplicateTopic(p ReplicationPolicy, topics *Filter, heartbeatsReplication bool, targetAlias, topic string) bool {
	return (topics.Accepts(topic) || (heartbeatsReplication && p.IsHeartbeatsTopic(topic))) &&
		!p.IsInternalTopic(topic) &&
		!IsCycle(p, targetAlias, topic)
}

// IsCycle reports whether replicating topic to targetAlias would send it back where it came
// from: some hop of its name, walking upstream, came from targetAlias. With the default policy
// "B.foo" is never sent to B and "A.B.foo" never to A. The identity policy keeps names, so it
// detects no cycle except for topics whose name ends in "heartbeats". The test is purely on
// alias strings, as in MM2: an alias that contains the separator defeats it.
func IsCycle(p ReplicationPolicy, targetAlias, topic string) bool {
	for grown := 0; ; {
		src, ok := p.TopicSource(topic)
		if !ok {
			return false
		}
		if src == targetAlias {
			return true
		}
		up, ok := p.UpstreamTopic(topic)
		if !ok || up == topic {
			// Identity-style policies: the name does not change, so no cycle can be seen.
			return false
		}
		if len(up) >= len(topic) {
			if grown++; grown > maxNonShrinkingHops {
				return false
			}
		}
		topic = up
	}
}

// CheckpointTopic is MirrorCheckpointTask.renameTopicPartition (spec §6.3): the target-side name
// of a source topic in a checkpoint of the flow sourceAlias->targetAlias. A topic that itself
// came from the target ("B.orders" read on A for A->B) maps back to its original name
// ("orders"); any other topic maps to its remote name ("A.orders").
func CheckpointTopic(p ReplicationPolicy, sourceAlias, targetAlias, topic string) string {
	if src, ok := p.TopicSource(topic); ok && src == targetAlias {
		return p.OriginalTopic(topic)
	}
	return p.FormatRemoteTopic(sourceAlias, topic)
}

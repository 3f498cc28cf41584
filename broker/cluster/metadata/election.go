package metadata

// ElectionCandidates returns the partitions whose leader an ElectLeaders
// command would change: those without a leader that could get one, and
// with preferred, also those whose preferred replica could lead again.
// The controller uses it to propose elections only when they do something.
func (img *Image) ElectionCandidates(preferred bool) []TopicPartition {
	next, err := img.Apply(Command{Type: CmdElectLeaders, ElectLeaders: &ElectLeaders{Preferred: preferred}}, img.Index)
	if err != nil {
		return nil
	}
	var out []TopicPartition
	for _, name := range next.TopicNames() {
		before := img.Topics[name]
		for i, p := range next.Topics[name].Partitions {
			if p.Leader != before.Partitions[i].Leader {
				out = append(out, TopicPartition{Topic: name, Partition: i})
			}
		}
	}
	return out
}

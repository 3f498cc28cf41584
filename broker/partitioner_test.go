package broker

import "testing"

func TestKeyPartitionIsKafkasDefault(t *testing.T) {
	// toPositive(-973932308) = 1173551340; 1173551340 % 4 = 0.
	cases := []struct {
		key        string
		partitions int32
		want       int32
	}{
		{"21", 4, int32(1173551340 % 4)},
		{"foobar", 3, int32((-790332482 & 0x7fffffff) % 3)},
		{"abc", 10, int32(479470107 % 10)},
	}
	for _, c := range cases {
		if got := keyPartition([]byte(c.key), c.partitions); got != c.want {
			t.Errorf("keyPartition(%q, %d) = %d, want %d", c.key, c.partitions, got, c.want)
		}
	}
}

func TestRoundRobinCycles(t *testing.T) {
	var rr roundRobin
	for i := 0; i < 9; i++ {
		if got := rr.pick(3); got != int32(i%3) {
			t.Fatalf("pick %d = %d", i, got)
		}
	}
}

package replay

import (
	"strconv"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// MaxOffsetsAnnotationBytes bounds the explicit offsets that travel to the
// runner in a pod annotation (AnnotationOffsets). The API server refuses a
// pod whose annotations exceed 256 KiB in all; this leaves 16 KiB for the
// request-name annotation and whatever admission webhooks add. The CRD's
// rule on target.offsets enforces it at admission, counting the same JSON
// (see OffsetsAnnotationBytes); TestEnvtestOffsetsBound keeps the two equal.
const MaxOffsetsAnnotationBytes = 240 << 10

// OffsetsAnnotationBytes is the length of the offsets annotation's JSON for
// these entries: 36 bytes of punctuation and field names per entry, its
// topic, and the digits of its partition and offset (brackets aside).
func OffsetsAnnotationBytes(offsets []v1alpha1.PartitionOffset) int {
	n := 0
	for _, o := range offsets {
		n += 36 + len(o.Topic) + len(strconv.FormatInt(int64(o.Partition), 10)) + len(strconv.FormatInt(o.Offset, 10))
	}
	return n
}

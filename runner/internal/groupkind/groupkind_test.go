package groupkind

import (
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func shareAnswer(code int16, state string, clients ...string) *kmsg.ShareGroupDescribeResponse {
	g := kmsg.NewShareGroupDescribeResponseGroup()
	g.GroupID, g.ErrorCode, g.GroupState = "g", code, state
	for _, c := range clients {
		m := kmsg.NewShareGroupDescribeResponseGroupMember()
		m.ClientID, m.ClientHost = c, "/10.0.0.1"
		g.Members = append(g.Members, m)
	}
	return &kmsg.ShareGroupDescribeResponse{Groups: []kmsg.ShareGroupDescribeResponseGroup{g}}
}

func streamsAnswer(code int16, state string, subs ...kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology) *kmsg.StreamsGroupDescribeResponse {
	g := kmsg.NewStreamsGroupDescribeResponseGroup()
	g.Group, g.ErrorCode, g.State = "g", code, state
	if subs != nil {
		g.Topology = &kmsg.StreamsGroupDescribeResponseGroupTopology{Subtopologies: subs}
	}
	return &kmsg.StreamsGroupDescribeResponse{Groups: []kmsg.StreamsGroupDescribeResponseGroup{g}}
}

func TestDecide(t *testing.T) {
	notFound := kerr.GroupIDNotFound.Code
	sub := func(src []string, repSink []string, repSrc ...string) kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology {
		s := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
		s.SourceTopics, s.RepartitionSinkTopics = src, repSink
		for _, r := range repSrc {
			s.RepartitionSourceTopics = append(s.RepartitionSourceTopics, kmsg.TopicInfo{Topic: r})
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		share   *kmsg.ShareGroupDescribeResponse
		streams *kmsg.StreamsGroupDescribeResponse
		want    Info
		wantErr string
	}{
		{name: "neither kind, or no group", share: shareAnswer(notFound, ""), streams: streamsAnswer(notFound, ""), want: Info{Kind: Consumer}},
		{name: "a broker that knows neither request", want: Info{Kind: Consumer}},
		{name: "share groups turned off", share: shareAnswer(kerr.UnsupportedVersion.Code, ""), want: Info{Kind: Consumer}},
		{name: "a live share group", share: shareAnswer(0, "Stable", "a", "b"), streams: streamsAnswer(notFound, ""),
			want: Info{Kind: Share, State: "Stable", Members: []string{"a@10.0.0.1", "b@10.0.0.1"}}},
		{name: "an empty share group on a broker without streams groups", share: shareAnswer(0, "Empty"), want: Info{Kind: Share, State: "Empty"}},
		{name: "a streams group's input and repartition topics", share: shareAnswer(notFound, ""),
			streams: streamsAnswer(0, "Empty",
				sub([]string{"orders", "clicks"}, []string{"app-rekey-repartition"}),
				sub([]string{"app-rekey-repartition"}, nil, "app-rekey-repartition")),
			want: Info{Kind: Streams, State: "Empty", SourceTopics: []string{"clicks", "orders"}, RepartitionTopics: []string{"app-rekey-repartition"}}},
		{name: "both kinds", share: shareAnswer(0, "Empty"), streams: streamsAnswer(0, "Empty"), wantErr: "both as a share group and as a streams group"},
		{name: "not the coordinator is passed on", share: shareAnswer(kerr.NotCoordinator.Code, ""), wantErr: "NOT_COORDINATOR"},
		{name: "refused authorization is passed on", streams: streamsAnswer(kerr.GroupAuthorizationFailed.Code, ""), wantErr: "GROUP_AUTHORIZATION_FAILED"},
		{name: "a share answer for no group", share: &kmsg.ShareGroupDescribeResponse{}, wantErr: "0 answers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decide("g", tc.share, tc.streams)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestDecideRetriable: a coordinator moving or loading is retried by
// Describe; the error decide returns keeps Kafka's code for that.
func TestDecideRetriable(t *testing.T) {
	_, err := decide("g", shareAnswer(kerr.CoordinatorLoadInProgress.Code, ""), nil)
	if !retriable(err) {
		t.Errorf("%v is not retried", err)
	}
	_, err = decide("g", nil, streamsAnswer(kerr.GroupAuthorizationFailed.Code, ""))
	if retriable(err) {
		t.Errorf("%v is retried", err)
	}
}

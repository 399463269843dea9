// Package knative resolves a request's spec.consumerRef (a KafkaSource, a
// Trigger and its Broker, a Subscription and its KafkaChannel) into the
// group, bootstrap servers, topics and Secret it replays
// (v1alpha1.ResolvedConsumer, status.resolved), following what
// eventing-kafka-broker writes; and checks a stored resolution
// (ValidateResolved) before a Job is made from it. It is pure: the
// launcher reads the Knative objects, unstructured, and passes them in;
// nothing here takes a client.
package knative

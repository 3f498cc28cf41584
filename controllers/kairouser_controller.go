/*
Copyright 2026 The KairoLog Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	pkcs12 "software.sslmate.com/src/go-pkcs12"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/auth"
	brokerclient "github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/pki"
)

// Keys of a KairoUser's Secret, as Strimzi's KafkaUser Secrets name them.
const (
	// UserPasswordKey and UserJAASKey: a scram-sha-512 user's password and
	// a Kafka client's sasl.jaas.config line for it.
	UserPasswordKey = "password"
	UserJAASKey     = "sasl.jaas.config"
	// UserCertKey, UserKeyKey, UserP12Key and UserP12PasswordKey: a tls
	// user's client certificate and key (PEM), the same as a PKCS#12
	// bundle and the bundle's password. CACertKey (ca.crt) holds the CAs
	// to trust the brokers by.
	UserCertKey        = "user.crt"
	UserKeyKey         = "user.key"
	UserP12Key         = "user.p12"
	UserP12PasswordKey = "user.password"
)

// generatedPasswordLength is the length of a generated password: 32
// letters and digits, about 190 bits.
const generatedPasswordLength = 32

// KairoUserReconciler keeps each KairoUser's credentials in a Secret named
// after it: a password (generated, or the one the user supplies) for
// scram-sha-512, or a client certificate issued by the cluster CA for tls.
type KairoUserReconciler struct {
	client.Client
	// APIReader reads Secrets the operator did not label (a supplied
	// password, a user-supplied CA).
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	// Brokers reaches the cluster's brokers, where each user's credential
	// and ACLs go.
	Brokers BrokerClients
	// ResyncInterval is how often a user is compared with the brokers;
	// DefaultResyncInterval when zero.
	ResyncInterval time.Duration
	// Now is the clock certificates are issued by; nil is time.Now.
	Now func() time.Time
	// Namespaces limits the watch of supplied password Secrets to the
	// namespaces the manager watches; empty is every namespace.
	Namespaces []string
}

// +kubebuilder:rbac:groups=kairolog.io,resources=kairousers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=kairousers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=kairousers/finalizers,verbs=update
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;create;update;patch

// Reconcile writes the user's Secret, puts the user's credential and ACLs
// on the cluster's brokers, and reports both in the Ready condition.
// Deleting a KairoUser removes it from the brokers (the finalizer) and
// deletes its Secret (owner reference).
func (r *KairoUserReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	u := &kairov1alpha1.KairoUser{}
	if err := r.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster := &kairov1alpha1.KairoCluster{}
	err := r.Get(ctx, types.NamespacedName{Namespace: u.Namespace, Name: u.Spec.ClusterRef.Name}, cluster)
	switch {
	case apierrors.IsNotFound(err):
		cluster = nil
	case err != nil:
		return ctrl.Result{}, err
	}
	if !u.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, u, cluster)
	}
	if cluster == nil {
		return r.notReady(ctx, u, ReasonClusterNotReady, fmt.Sprintf("KairoCluster %s does not exist", u.Spec.ClusterRef.Name))
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return r.notReady(ctx, u, ReasonClusterNotReady, fmt.Sprintf("KairoCluster %s is being deleted", cluster.Name))
	}
	creds, err := r.credentials(ctx, u, cluster)
	var userErr *userError
	switch {
	case errors.As(err, &userErr):
		return r.notReady(ctx, u, userErr.reason, userErr.Error())
	case errors.Is(err, errNoClusterCA):
		return r.notReady(ctx, u, ReasonClusterNotReady, fmt.Sprintf("KairoCluster %s has no CA yet: %v", cluster.Name, err))
	case err != nil:
		return ctrl.Result{}, err
	}
	// The finalizer goes on before the brokers hear of the user, so that
	// none is left behind on them.
	if err := setFinalizer(ctx, r.Client, u, true); err != nil {
		return ctrl.Result{}, err
	}
	changed, err := r.writeUserSecret(ctx, u, creds)
	if errors.As(err, &userErr) {
		return r.notReady(ctx, u, userErr.reason, userErr.Error())
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if changed {
		log.Info("Wrote user credentials", "secret", u.Name)
		recordEvent(r.Recorder, u, nil, corev1.EventTypeNormal, ReasonCredentialsIssued, "Issue",
			"Wrote the %s credentials into Secret %s", u.Spec.Authentication.Type, u.Name)
	}
	if res, done, err := r.putOnBrokers(ctx, u, cluster, creds.scram); done {
		return res, err
	}
	if err := r.setStatus(ctx, u, u.Name, metav1.ConditionTrue, ReasonUserApplied, fmt.Sprintf(
		"The %s credentials are in Secret %s; the brokers of KairoCluster %s hold the user and its %d ACL rules",
		u.Spec.Authentication.Type, u.Name, cluster.Name, len(brokerACLs(u)))); err != nil {
		return ctrl.Result{}, err
	}
	// A certificate is renewed on time; a password needs no timer; the
	// brokers are compared with the user every resync.
	return ctrl.Result{RequeueAfter: resyncAfter(r.resync())}, nil
}

// putOnBrokers writes the user to the brokers when they do not hold it as
// it is. done ends the pass with a False condition when it failed.
func (r *KairoUserReconciler) putOnBrokers(ctx context.Context, u *kairov1alpha1.KairoUser, c *kairov1alpha1.KairoCluster,
	scram *auth.Credential) (ctrl.Result, bool, error) {
	bc, err := r.Brokers.For(c)
	if err != nil {
		res, err := r.notReadyWithSecret(ctx, u, u.Name, ReasonClusterNotReady, fmt.Sprintf("No client for the brokers of KairoCluster %s: %v", c.Name, err))
		return res, true, err
	}
	acls := brokerACLs(u)
	wrote, err := putOnBrokers(ctx, bc, u.Name, brokerclient.PutUserRequest{SCRAM: scram, ACLs: acls})
	if err != nil {
		f := classify(c, "put user "+u.Name, err)
		res, err := r.notReadyWithSecret(ctx, u, u.Name, f.reason, f.message)
		return res, true, err
	}
	if wrote {
		logf.FromContext(ctx).Info("Put the user on the brokers", "user", u.Name, "acls", len(acls))
		recordEvent(r.Recorder, u, nil, corev1.EventTypeNormal, ReasonUserApplied, "Apply",
			"Put user %s (%s, %d ACL rules) on the brokers of KairoCluster %s", u.Name, u.Spec.Authentication.Type, len(acls), c.Name)
	}
	return ctrl.Result{}, false, nil
}

// finalize removes a deleted KairoUser from its cluster's brokers, then its
// finalizer. A cluster that is gone or going away takes its users with it.
func (r *KairoUserReconciler) finalize(ctx context.Context, u *kairov1alpha1.KairoUser, c *kairov1alpha1.KairoCluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(u, kairov1alpha1.FinalizerName) {
		return ctrl.Result{}, nil
	}
	if c != nil && c.DeletionTimestamp.IsZero() {
		bc, err := r.Brokers.For(c)
		if err == nil {
			err = deleteFromBrokers(ctx, bc, u.Name)
		}
		if err != nil {
			f := classify(c, "delete user "+u.Name, err)
			return r.notReadyWithSecret(ctx, u, u.Status.Secret, f.reason, "Cannot remove the user from the brokers yet: "+f.message)
		}
		recordEvent(r.Recorder, u, nil, corev1.EventTypeNormal, ReasonUserDeleted, "Delete",
			"Removed user %s from the brokers of KairoCluster %s", u.Name, c.Name)
	}
	return ctrl.Result{}, setFinalizer(ctx, r.Client, u, false)
}

func (r *KairoUserReconciler) resync() time.Duration {
	if r.ResyncInterval > 0 {
		return r.ResyncInterval
	}
	return DefaultResyncInterval
}

// userError is a problem the user must fix (a missing supplied password):
// a False condition, not a failed reconcile.
type userError struct {
	reason string
	msg    string
}

func (e *userError) Error() string { return e.msg }

// userCredentials are what the user's Secret holds, and the salted
// credential of a scram-sha-512 user that the brokers get.
type userCredentials struct {
	data        map[string][]byte
	annotations map[string]string
	scram       *auth.Credential
}

// credentials are the Secret's data for the user's authentication type.
func (r *KairoUserReconciler) credentials(ctx context.Context, u *kairov1alpha1.KairoUser, c *kairov1alpha1.KairoCluster) (*userCredentials, error) {
	old := &corev1.Secret{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: u.Namespace, Name: u.Name}, old); err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if u.Spec.Authentication.Type == kairov1alpha1.UserAuthenticationTLS {
		data, err := r.certificate(ctx, u, c, old.Data)
		return &userCredentials{data: data}, err
	}
	password, err := r.password(ctx, u, old.Data[UserPasswordKey])
	if err != nil {
		return nil, err
	}
	cred, err := scramCredential(password, old.Data[UserPasswordKey], old.Annotations[SCRAMCredentialAnnotation])
	if err != nil {
		return nil, err
	}
	credJSON, err := json.Marshal(cred)
	if err != nil {
		return nil, err
	}
	return &userCredentials{
		data: map[string][]byte{
			UserPasswordKey: password,
			UserJAASKey: fmt.Appendf(nil, `org.apache.kafka.common.security.scram.ScramLoginModule required username=%q password=%q;`,
				u.Name, password),
		},
		annotations: map[string]string{SCRAMCredentialAnnotation: string(credJSON)},
		scram:       cred,
	}, nil
}

// password is the supplied password, or the one generated earlier, or a
// new one.
func (r *KairoUserReconciler) password(ctx context.Context, u *kairov1alpha1.KairoUser, old []byte) ([]byte, error) {
	if p := u.Spec.Authentication.Password; p != nil {
		ref := p.ValueFrom.SecretKeyRef
		s := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: u.Namespace, Name: ref.Name}, s); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, &userError{ReasonPasswordNotFound, fmt.Sprintf("password Secret %s does not exist", ref.Name)}
			}
			return nil, err
		}
		v := s.Data[ref.Key]
		if len(v) == 0 {
			return nil, &userError{ReasonPasswordNotFound, fmt.Sprintf("password Secret %s has no key %q", ref.Name, ref.Key)}
		}
		return v, nil
	}
	if len(old) >= generatedPasswordLength {
		return old, nil
	}
	return []byte(rand.Text()[:generatedPasswordLength-6] + rand.Text()[:6]), nil
}

// certificate is a tls user's Secret data: a client certificate of the
// cluster CA, kept until it is due for renewal or the CA changes.
func (r *KairoUserReconciler) certificate(ctx context.Context, u *kairov1alpha1.KairoUser, c *kairov1alpha1.KairoCluster,
	old map[string][]byte) (map[string][]byte, error) {
	if resources.IssuedByCertManager(c) {
		return r.issuedCertificate(ctx, u, c, old)
	}
	ca, err := loadClusterCA(ctx, r.Client, r.APIReader, c)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := ca.issue(u.Name, pki.OrgUser, old[UserCertKey], old[UserKeyKey], r.now())
	if err != nil {
		return nil, err
	}
	return withPKCS12(u, certPEM, keyPEM, ca.trust, old)
}

// withPKCS12 is a tls user's Secret data for a certificate and key: them,
// the CAs to trust, and a PKCS#12 bundle of all three with its password
// (the old bundle while the certificate is the same).
func withPKCS12(u *kairov1alpha1.KairoUser, certPEM, keyPEM []byte, trust []*x509.Certificate, old map[string][]byte) (map[string][]byte, error) {
	data := map[string][]byte{UserCertKey: certPEM, UserKeyKey: keyPEM, resources.CACertKey: pki.EncodeCertificates(trust...)}
	if string(certPEM) == string(old[UserCertKey]) && len(old[UserP12Key]) > 0 {
		data[UserP12Key], data[UserP12PasswordKey] = old[UserP12Key], old[UserP12PasswordKey]
		return data, nil
	}
	certs, err := pki.ParseCertificates(certPEM)
	if err != nil {
		return nil, err
	}
	key, err := pki.ParseKey(keyPEM)
	if err != nil {
		return nil, err
	}
	p12Password := rand.Text()[:generatedPasswordLength-6] + rand.Text()[:6]
	p12, err := pkcs12.Modern.Encode(key, certs[0], trust, p12Password)
	if err != nil {
		return nil, fmt.Errorf("PKCS#12 bundle for %s: %w", u.Name, err)
	}
	data[UserP12Key], data[UserP12PasswordKey] = p12, []byte(p12Password)
	return data, nil
}

func (r *KairoUserReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// writeUserSecret creates or updates the Secret named after the user,
// owned by it, with exactly the credentials' data and annotation. A Secret
// of that name that is not the user's is never overwritten.
func (r *KairoUserReconciler) writeUserSecret(ctx context.Context, u *kairov1alpha1.KairoUser, creds *userCredentials) (bool, error) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: u.Name, Namespace: u.Namespace}}
	err := r.Get(ctx, client.ObjectKeyFromObject(s), s)
	if apierrors.IsNotFound(err) {
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s), s); err == nil {
			return false, &userError{ReasonResourceNotOwned, fmt.Sprintf("Secret %s exists and is not owned by this KairoUser", u.Name)}
		} else if !apierrors.IsNotFound(err) {
			return false, err
		}
	} else if err != nil {
		return false, err
	} else if !metav1.IsControlledBy(s, u) {
		return false, &userError{ReasonResourceNotOwned, fmt.Sprintf("Secret %s exists and is not owned by this KairoUser", u.Name)}
	}
	before := s.DeepCopy()
	s.Labels = mergeStrings(s.Labels, map[string]string{
		resources.LabelManagedBy: resources.ManagedBy, resources.LabelName: resources.AppName,
		resources.LabelInstance: u.Spec.ClusterRef.Name, kairov1alpha1.UserLabel: u.Name})
	s.Type = corev1.SecretTypeOpaque
	s.Data = creds.data
	delete(s.Annotations, SCRAMCredentialAnnotation)
	if len(creds.annotations) > 0 {
		s.Annotations = mergeStrings(s.Annotations, creds.annotations)
	}
	if err := controllerutil.SetControllerReference(u, s, r.Scheme); err != nil {
		return false, err
	}
	if s.ResourceVersion == "" {
		return true, r.Create(ctx, s)
	}
	if secretsEqual(before, s) {
		return false, nil
	}
	return true, r.Update(ctx, s)
}

// notReady reports a problem in the Ready condition (and an event when it
// is new) and looks again after a while.
func (r *KairoUserReconciler) notReady(ctx context.Context, u *kairov1alpha1.KairoUser, reason, msg string) (ctrl.Result, error) {
	return r.notReadyWithSecret(ctx, u, "", reason, msg)
}

// notReadyWithSecret is notReady once the user's Secret is written.
func (r *KairoUserReconciler) notReadyWithSecret(ctx context.Context, u *kairov1alpha1.KairoUser, secret, reason, msg string) (ctrl.Result, error) {
	if err := r.setStatus(ctx, u, secret, metav1.ConditionFalse, reason, msg); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: pollAfter(r.resync())}, nil
}

// setStatus writes the username, the Secret (empty until written) and the
// Ready condition when they changed; an event marks Ready turning False.
func (r *KairoUserReconciler) setStatus(ctx context.Context, u *kairov1alpha1.KairoUser, secret string,
	status metav1.ConditionStatus, reason, msg string) error {
	orig := u.DeepCopy()
	u.Status.ObservedGeneration = u.Generation
	u.Status.Username = u.Name
	u.Status.Secret = secret
	old := meta.FindStatusCondition(orig.Status.Conditions, kairov1alpha1.ConditionReady)
	meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{Type: kairov1alpha1.ConditionReady, Status: status,
		Reason: reason, Message: msg, ObservedGeneration: u.Generation})
	if equalStatus(orig.Status, u.Status) {
		return nil
	}
	if status == metav1.ConditionFalse && (old == nil || old.Reason != reason) {
		recordEvent(r.Recorder, u, nil, corev1.EventTypeWarning, reason, "Reconcile", "%s", msg)
	}
	return r.Status().Patch(ctx, u, client.MergeFrom(orig))
}

func equalStatus(a, b kairov1alpha1.KairoUserStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || a.Username != b.Username || a.Secret != b.Secret ||
		len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration {
			return false
		}
	}
	return true
}

// SetupWithManager registers the reconciler: a KairoUser's spec changes,
// its Secret, the password Secret it names, its cluster's CA Secrets (a
// renewal reissues client certificates) and its cluster's spec changes (a
// new cluster, security turned on) wake it.
func (r *KairoUserReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Recorder = eventRecorder(mgr, r.Recorder, "kairouser")
	passwords, err := r.passwordSecretSource(mgr)
	if err != nil {
		return err
	}
	usersOfCluster := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		cluster := obj.GetLabels()[resources.LabelInstance]
		if cluster == "" || obj.GetLabels()[kairov1alpha1.UserLabel] != "" {
			return nil
		}
		var users kairov1alpha1.KairoUserList
		if err := r.List(ctx, &users, client.InNamespace(obj.GetNamespace())); err != nil {
			return nil
		}
		var out []reconcile.Request
		for _, u := range users.Items {
			if u.Spec.ClusterRef.Name == cluster {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&u)})
			}
		}
		return out
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("kairouser").
		For(&kairov1alpha1.KairoUser{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.Secret{}).
		Watches(&corev1.Secret{}, usersOfCluster).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(userOfIssuedSecret)).
		WatchesRawSource(passwords).
		Watches(&kairov1alpha1.KairoCluster{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			var users kairov1alpha1.KairoUserList
			if err := r.List(ctx, &users, client.InNamespace(obj.GetNamespace())); err != nil {
				return nil
			}
			var out []reconcile.Request
			for _, u := range users.Items {
				if u.Spec.ClusterRef.Name == obj.GetName() {
					out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&u)})
				}
			}
			return out
		}), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}

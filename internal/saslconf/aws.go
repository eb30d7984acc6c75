package saslconf

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	awssasl "github.com/twmb/franz-go/pkg/sasl/aws"
)

const (
	defaultRoleSessionName = "aws-msk-iam-auth" // as aws-msk-iam-auth's MSKCredentialProvider
	defaultSTSRegion       = "aws-global"       // likewise: STS's global endpoint
)

// aws builds AWS_MSK_IAM as aws-msk-iam-auth's IAMLoginModule and
// MSKCredentialProvider do: the standard AWS credential chain, a shared
// config profile (awsProfileName), or a role assumed through STS
// (awsRoleArn, awsRoleSessionName, awsRoleExternalId, awsStsRegion, with
// awsRoleAccessKeyId/awsRoleSecretAccessKey/awsRoleSessionToken as the
// credentials that assume it). Credentials are retrieved for each
// authentication through the SDK's cache, which refreshes them before they
// expire. The request is signed for the region in the broker's host name,
// else AWS_REGION or AWS_DEFAULT_REGION (franz-go's signer; Java's falls
// back to the EC2 instance's region).
func (b *builder) aws() *mechanism {
	profile, _ := b.opt("awsProfileName")
	roleARN, _ := b.opt("awsRoleArn")
	session, _ := b.opt("awsRoleSessionName")
	externalID, _ := b.opt("awsRoleExternalId")
	stsRegion, _ := b.opt("awsStsRegion")
	roleKey, _ := b.opt("awsRoleAccessKeyId")
	roleSecret, _ := b.opt("awsRoleSecretAccessKey")
	roleToken, _ := b.opt("awsRoleSessionToken")
	debug := b.optTrue("awsDebugCreds")
	for _, k := range []string{"awsMaxRetries", "awsMaxBackOffTimeMs"} {
		if _, ok := b.opt(k); ok {
			b.warn(b.jaasOrigin(), "sasl.jaas.config: option %s has no effect: the AWS SDK retries credential requests itself", k)
		}
	}
	if roleARN == "" && (session != "" || externalID != "" || stsRegion != "" || roleKey != "" || roleSecret != "" || roleToken != "") {
		b.warn(b.jaasOrigin(), "sasl.jaas.config: the awsRole*/awsStsRegion options have no effect without awsRoleArn")
	}
	if (roleKey == "") != (roleSecret == "") {
		b.problem(b.jaasOrigin(), "sasl.jaas.config: awsRoleAccessKeyId and awsRoleSecretAccessKey go together; set both or neither")
		return nil
	}
	if roleARN != "" && profile != "" {
		b.warn(b.jaasOrigin(), "sasl.jaas.config: awsRoleArn and awsProfileName are both set: Strait assumes the role with the profile's credentials (aws-msk-iam-auth tries the profile's credentials first and the role only when they fail)")
	}

	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.DisableKeepAlives = true // credentials are fetched rarely: keep no idle connection
		})),
	}
	if profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(profile))
	}
	cfg, err := awsconfig.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		what := "the AWS configuration"
		if profile != "" {
			what = fmt.Sprintf("the AWS shared config profile %q (awsProfileName)", profile)
		}
		b.problem(b.jaasOrigin(), "loading %s: %v; check the profile name and the files AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE point to (default ~/.aws/config and ~/.aws/credentials)", what, err)
		return nil
	}
	provider := cfg.Credentials
	if roleARN != "" {
		base := cfg.Copy()
		if roleKey != "" {
			base.Credentials = credentials.NewStaticCredentialsProvider(roleKey, roleSecret, roleToken)
		}
		if stsRegion == "" {
			stsRegion = defaultSTSRegion
		}
		client := sts.NewFromConfig(base, func(o *sts.Options) { o.Region = stsRegion })
		if session == "" {
			session = defaultRoleSessionName
		}
		provider = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(client, roleARN, func(o *stscreds.AssumeRoleOptions) {
			o.RoleSessionName = session
			if externalID != "" {
				o.ExternalID = aws.String(externalID)
			}
		}))
	}
	if provider == nil {
		b.problem(b.jaasOrigin(), "the AWS SDK found no credential source; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile (AWS_PROFILE or awsProfileName), awsRoleArn, or run with an instance or task role")
		return nil
	}
	log := b.o.Log.With("component", "saslconf", "cluster", b.c.Cluster, "mechanism", AWSMSKIAM)
	if debug {
		b.warn(b.jaasOrigin(), "sasl.jaas.config: awsDebugCreds=true logs where each authentication's credentials came from (never the keys); unlike aws-msk-iam-auth, Strait does not call STS GetCallerIdentity")
	}
	inner := awssasl.ManagedStreamingIAM(func(ctx context.Context) (awssasl.Auth, error) {
		c, err := provider.Retrieve(ctx)
		if err != nil {
			return awssasl.Auth{}, fmt.Errorf("getting AWS credentials: %w; check the AWS credential chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or awsProfileName, awsRoleArn, the instance or task role)", err)
		}
		if debug {
			log.Info("AWS credentials for AWS_MSK_IAM", "source", c.Source, "temporary", c.SessionToken != "", "expires", c.Expires)
		}
		return awssasl.Auth{AccessKey: c.AccessKeyID, SecretKey: c.SecretAccessKey, SessionToken: c.SessionToken}, nil
	})
	return &mechanism{name: AWSMSKIAM, cluster: b.c.Cluster, inner: inner, hint: regionHint}
}

// regionHint explains franz-go's error for a broker host name without a
// region.
func regionHint(err error) string {
	if strings.Contains(err.Error(), "cannot determine the region") {
		return "; AWS_MSK_IAM signs for the region in the broker's host name: set AWS_REGION when the host name has none"
	}
	return ""
}

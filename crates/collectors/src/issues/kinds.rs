//! DevTools' issue classes, by protocol code: each issue's code (what aggregates it), its
//! primary key (what makes a repeat) and its description (which markdown file, which links),
//! as devtools-frontend f7e7785 computes them.

use super::deprecations::DEPRECATIONS;
use super::js::{join, stringify, stringify_keys, template};
use serde_json::Value;

/// One issue, as the first instance DevTools makes of a protocol issue.
#[derive(Debug, Clone, PartialEq)]
pub struct Kind {
    pub code: String,
    pub primary_key: String,
    pub description: Option<Description>,
}

/// Which markdown describes an issue, its links, and the values of its placeholders (`None`:
/// the markdown is printed as it is, unchecked).
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    pub file: String,
    pub links: Vec<(String, String)>,
    pub substitutions: Option<Vec<(String, String)>>,
}

fn described(file: impl Into<String>, links: &[(&str, &str)], substitutions: bool) -> Description {
    Description {
        file: file.into(),
        links: links
            .iter()
            .map(|(link, title)| (link.to_string(), title.to_string()))
            .collect(),
        substitutions: substitutions.then(Vec::new),
    }
}

const SAME_SITE: (&str, &str) = (
    "https://web.dev/samesite-cookies-explained/",
    "SameSite cookies explained",
);
const FILE_BUG: (&str, &str) = (
    "https://bugs.chromium.org/p/chromium/issues/entry?template=Defect%20report%20from%20user&summary=[Cross-Site Redirect Chain] <INSERT BUG SUMMARY HERE>&comment=Chrome Version: (copy from chrome://version)%0AChannel: (e.g. Canary, Dev, Beta, Stable)%0A%0AAffected URLs:%0A%0AWhat is the expected result?%0A%0AWhat happens instead?%0A%0AWhat is the purpose of the cross-site redirect?:%0A%0AWhat steps will reproduce the problem?:%0A(1)%0A(2)%0A(3)%0A%0APlease provide any additional information below.&components=Internals%3ENetwork%3ECookies",
    "File a bug",
);
const COOP_COEP: (&str, &str) = ("https://web.dev/coop-coep/", "COOP and COEP");
const SAME_ORIGIN: (&str, &str) = (
    "https://web.dev/same-site-same-origin/",
    "Same-Site and Same-Origin",
);
const CORS: (&str, &str) = (
    "https://web.dev/cross-origin-resource-sharing",
    "Cross-Origin Resource Sharing (CORS)",
);
const LOCAL_NETWORK: (&str, &str) = (
    "https://developer.chrome.com/blog/local-network-access",
    "Local Network Access",
);
const LABELS: (&str, &str) = (
    "https://developer.mozilla.org/en-US/docs/Web/HTML/Element/label",
    "The label elements",
);
const AUTOCOMPLETE: (&str, &str) = (
    "https://developer.mozilla.org/en-US/docs/Web/HTML/Attributes/autocomplete#values",
    "HTML attribute: autocomplete",
);
const FEDCM: (&str, &str) = (
    "https://fedidcg.github.io/FedCM/",
    "Federated Credential Management API",
);
const ALLOWLISTS: (&str, &str) = (
    "https://github.com/WICG/connection-allowlists",
    "Connection Allowlists API",
);

/// The issue DevTools makes first of `protocol` (an `Audits.InspectorIssue`), or `None` where
/// it makes none (an unknown code, missing details, a reason it skips).
pub fn kind(protocol: &Value) -> Option<Kind> {
    let code = protocol["code"].as_str()?;
    let field = |name: &str| {
        let details = &protocol["details"][name];
        details.is_object().then_some(details)
    };
    match code {
        "CookieIssue" => cookie(field("cookieIssueDetails")?),
        "MixedContentIssue" => fixed(
            field("mixedContentIssueDetails")?,
            "MixedContentIssue",
            None,
            described(
                "mixedContent.md",
                &[(
                    "https://web.dev/what-is-mixed-content/",
                    "Preventing mixed content",
                )],
                false,
            ),
        ),
        "HeavyAdIssue" => fixed(
            field("heavyAdIssueDetails")?,
            "HeavyAdIssue",
            Some("HeavyAdIssue-"),
            described(
                "heavyAd.md",
                &[(
                    "https://developers.google.com/web/updates/2020/05/heavy-ad-interventions",
                    "Handling heavy ad interventions",
                )],
                false,
            ),
        ),
        "ContentSecurityPolicyIssue" => csp(field("contentSecurityPolicyIssueDetails")?),
        "BlockedByResponseIssue" => blocked_by_response(field("blockedByResponseIssueDetails")?),
        "SharedArrayBufferIssue" => fixed(
            field("sharedArrayBufferIssueDetails")?,
            "SharedArrayBufferIssue",
            None,
            described(
                "sharedArrayBuffer.md",
                &[(
                    "https://developer.chrome.com/blog/enabling-shared-array-buffer/",
                    "Enabling SharedArrayBuffer",
                )],
                false,
            ),
        ),
        "SharedDictionaryIssue" => shared_dictionary(field("sharedDictionaryIssueDetails")?),
        "CorsIssue" => cors(field("corsIssueDetails")?),
        "QuirksModeIssue" => {
            let details = field("quirksModeIssueDetails")?;
            Some(Kind {
                code: "QuirksModeIssue".into(),
                primary_key: format!(
                    "QuirksModeIssue-({})-({})",
                    template(details.get("documentNodeId")),
                    template(details.get("url"))
                ),
                description: Some(described(
                    "CompatibilityModeQuirks.md",
                    &[("https://web.dev/doctype/", "Document compatibility mode")],
                    false,
                )),
            })
        }
        "GenericIssue" => generic(field("genericIssueDetails")?),
        "DeprecationIssue" => deprecation(field("deprecationIssueDetails")?),
        "ClientHintIssue" => {
            let details = field("clientHintIssueDetails")?;
            let file = match details["clientHintIssueReason"].as_str() {
                Some("MetaTagAllowListInvalidOrigin") => {
                    Some("clientHintMetaTagAllowListInvalidOrigin.md")
                }
                Some("MetaTagModifiedHTML") => Some("clientHintMetaTagModifiedHTML.md"),
                _ => None,
            };
            let links = [(
                "https://wicg.github.io/client-hints-infrastructure/",
                "Client Hints Infrastructure",
            )];
            keyed(
                details,
                "ClientHintIssue".into(),
                file.map(|file| described(file, &links, true)),
            )
        }
        "EmailVerificationRequestIssue" => {
            let details = field("emailVerificationRequestIssueDetails")?;
            let reason = details["emailVerificationRequestIssueReason"].as_str();
            let file = reason
                .filter(|reason| EMAIL_VERIFICATION_REASONS.contains(reason))
                .map(|reason| format!("emailVerificationRequest{reason}.md"));
            let links = [(
                "https://github.com/WICG/email-verification-protocol",
                "Email Verification Protocol",
            )];
            keyed(
                details,
                "EmailVerificationRequestIssue".into(),
                file.map(|file| described(file, &links, true)),
            )
        }
        "FederatedAuthRequestIssue" => {
            let details = field("federatedAuthRequestIssueDetails")?;
            let reason = details["federatedAuthRequestIssueReason"].as_str();
            let found = FEDERATED_AUTH
                .iter()
                .find(|(name, ..)| Some(*name) == reason);
            keyed(
                details,
                "FederatedAuthRequestIssue".into(),
                found.map(|(_, file, link)| described(*file, &[*link], true)),
            )
        }
        "BounceTrackingIssue" => fixed(
            field("bounceTrackingIssueDetails")?,
            "BounceTrackingIssue",
            None,
            described(
                "bounceTrackingMitigations.md",
                &[(
                    "https://privacycg.github.io/nav-tracking-mitigations/#bounce-tracking-mitigations",
                    "Bounce tracking mitigations",
                )],
                false,
            ),
        ),
        "StylesheetLoadingIssue" => {
            let details = field("stylesheetLoadingIssueDetails")?;
            let reason = details.get("styleSheetLoadingIssueReason");
            let file = match reason.and_then(Value::as_str) {
                Some("LateImportRule") => Some("stylesheetLateImport.md"),
                Some("RequestFailed") => Some("stylesheetRequestFailed.md"),
                _ => None,
            };
            keyed(
                details,
                format!("StylesheetLoadingIssue::{}", template(reason)),
                file.map(|file| described(file, &[], false)),
            )
        }
        "PartitioningBlobURLIssue" => {
            let details = field("partitioningBlobURLIssueDetails")?;
            let file = match details["partitioningBlobURLInfo"].as_str() {
                Some("BlockedCrossPartitionFetching") => "fetchingPartitionedBlobURL.md",
                _ => "navigatingPartitionedBlobURL.md",
            };
            let links = [
                (
                    "https://developers.google.com/privacy-sandbox/cookies/storage-partitioning",
                    "Partitioning BlobURL",
                ),
                (
                    "https://chromestatus.com/feature/5130361898795008",
                    "Chrome Status entry",
                ),
            ];
            keyed(
                details,
                "PartitioningBlobURLIssue".into(),
                Some(described(file, &links, false)),
            )
        }
        "PropertyRuleIssue" => property_rule(field("propertyRuleIssueDetails")?),
        "CookieDeprecationMetadataIssue" => {
            cookie_deprecation_metadata(field("cookieDeprecationMetadataIssueDetails")?)
        }
        "ElementAccessibilityIssue" => {
            element_accessibility(field("elementAccessibilityIssueDetails")?)
        }
        "SRIMessageSignatureIssue" => {
            sri_message_signature(field("sriMessageSignatureIssueDetails")?)
        }
        "UnencodedDigestIssue" => {
            let details = field("unencodedDigestIssueDetails")?;
            let error = template(details.get("error"));
            let links = [
                (
                    "https://www.ietf.org/archive/id/draft-ietf-httpbis-unencoded-digest-01.html",
                    "HTTP Unencoded Digest specification",
                ),
                (
                    "https://wicg.github.io/signature-based-sri/#unencoded-digest-validation",
                    "Server-initiated integrity checks",
                ),
            ];
            keyed(
                details,
                format!("UnencodedDigestIssue::{error}"),
                Some(described(
                    format!("unencodedDigest{error}.md"),
                    &links,
                    true,
                )),
            )
        }
        "ConnectionAllowlistIssue" => {
            let details = field("connectionAllowlistIssueDetails")?;
            let error = template(details.get("error"));
            let links = [(
                "https://wicg.github.io/private-network-access/#connection-allowlist",
                "Connection-Allowlist specification",
            )];
            keyed(
                details,
                format!("ConnectionAllowlistIssue::{error}"),
                Some(described(
                    format!("connectionAllowlist{error}.md"),
                    &links,
                    true,
                )),
            )
        }
        "WebInstallIssue" => {
            let details = field("webInstallIssueDetails")?;
            let reason = details.get("reason");
            let file = match reason.and_then(Value::as_str) {
                Some(
                    reason @ ("ManifestParsingOrNetworkError"
                    | "StartUrlInvalid"
                    | "ManifestMissingNameOrShortName"
                    | "ManifestMissingId"
                    | "NoManifest"),
                ) => Some(format!("webInstall{reason}.md")),
                _ => None,
            };
            keyed(
                details,
                format!("WebInstallIssue::{}", template(reason)),
                file.map(|file| described(file, &[], false)),
            )
        }
        "PermissionElementIssue" => permission_element(field("permissionElementIssueDetails")?),
        "SelectivePermissionsInterventionIssue" => fixed(
            field("selectivePermissionsInterventionIssueDetails")?,
            "SelectivePermissionsInterventionIssue",
            Some("SelectivePermissionsInterventionIssue-"),
            described(
                "selectivePermissionsIntervention.md",
                &[(
                    "https://crbug.com/435223477",
                    "Selective permissions intervention",
                )],
                false,
            ),
        ),
        "LazyLoadImageIssue" => {
            let details = field("lazyLoadImageIssueDetails")?;
            Some(Kind {
                code: "LazyLoadImageIssue".into(),
                primary_key: format!(
                    "LazyLoadImageIssue-({})-({})",
                    template(details.get("nodeId")),
                    template(details.get("url"))
                ),
                description: Some(described(
                    "lazyLoadImageZeroSize.md",
                    &[(
                        "https://web.dev/articles/browser-level-image-lazy-loading/#dimension-attributes",
                        "Lazy-loaded images should have explicit dimensions",
                    )],
                    false,
                )),
            })
        }
        _ => None,
    }
}

/// An issue whose primary key is its details' JSON.
fn keyed(details: &Value, code: String, description: Option<Description>) -> Option<Kind> {
    Some(Kind {
        code,
        primary_key: stringify(details),
        description,
    })
}

/// An issue with one code for every reason; its key is its details' JSON after `prefix`.
fn fixed(
    details: &Value,
    code: &str,
    prefix: Option<&str>,
    description: Description,
) -> Option<Kind> {
    Some(Kind {
        code: code.to_string(),
        primary_key: format!("{}{}", prefix.unwrap_or_default(), stringify(details)),
        description: Some(description),
    })
}

fn cookie(details: &Value) -> Option<Kind> {
    let reasons = |name: &str| -> Vec<&str> {
        details[name]
            .as_array()
            .map(|items| items.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let exclusions = reasons("cookieExclusionReasons");
    let warnings = reasons("cookieWarningReasons");
    let operation = details.get("operation");
    let code_for = |reason: &str, warnings: &[&str]| -> Option<String> {
        match reason {
            "ExcludeSameSiteStrict"
            | "ExcludeSameSiteLax"
            | "ExcludeSameSiteUnspecifiedTreatedAsLax" => {
                if warnings.contains(&"WarnCrossSiteRedirectDowngradeChangesInclusion") {
                    Some("CookieIssue::CrossSiteRedirectDowngradeChangesInclusion".into())
                } else if reason == "ExcludeSameSiteUnspecifiedTreatedAsLax" {
                    Some(join(
                        &[Some(&"CookieIssue".into()), Some(&reason.into()), operation],
                        "::",
                    ))
                } else {
                    None
                }
            }
            "ExcludePortMismatch" | "ExcludeSchemeMismatch" => {
                Some(format!("CookieIssue::{reason}"))
            }
            _ => Some(join(
                &[Some(&"CookieIssue".into()), Some(&reason.into()), operation],
                "::",
            )),
        }
    };
    let code = if !exclusions.is_empty() {
        exclusions
            .iter()
            .find_map(|reason| code_for(reason, &warnings))?
    } else {
        warnings.iter().find_map(|reason| code_for(reason, &[]))?
    };
    let cookie = &details["cookie"];
    let cookie_id = if cookie.is_object() {
        format!(
            "{};{};{}",
            template(cookie.get("domain")),
            template(cookie.get("path")),
            template(cookie.get("name"))
        )
    } else {
        details["rawCookieLine"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| "no-cookie-info".to_string())
    };
    let request_id = request_id(details);
    let suffix = code.strip_prefix("CookieIssue::").unwrap_or_default();
    let file = match suffix {
        "WarnSameSiteUnspecifiedLaxAllowUnsafe::ReadCookie"
        | "WarnSameSiteUnspecifiedCrossSiteContext::ReadCookie" => {
            Some(("SameSiteUnspecifiedLaxAllowUnsafeRead.md", Some(SAME_SITE)))
        }
        "WarnSameSiteUnspecifiedLaxAllowUnsafe::SetCookie"
        | "WarnSameSiteUnspecifiedCrossSiteContext::SetCookie" => {
            Some(("SameSiteUnspecifiedLaxAllowUnsafeSet.md", Some(SAME_SITE)))
        }
        "ExcludeSameSiteNoneInsecure::ReadCookie" => {
            Some(("SameSiteNoneInsecureErrorRead.md", Some(SAME_SITE)))
        }
        "ExcludeSameSiteNoneInsecure::SetCookie" => {
            Some(("SameSiteNoneInsecureErrorSet.md", Some(SAME_SITE)))
        }
        "WarnSameSiteNoneInsecure::ReadCookie" => {
            Some(("SameSiteNoneInsecureWarnRead.md", Some(SAME_SITE)))
        }
        "WarnSameSiteNoneInsecure::SetCookie" => {
            Some(("SameSiteNoneInsecureWarnSet.md", Some(SAME_SITE)))
        }
        "WarnAttributeValueExceedsMaxSize::ReadCookie"
        | "WarnAttributeValueExceedsMaxSize::SetCookie" => {
            Some(("CookieAttributeValueExceedsMaxSize.md", None))
        }
        "WarnDomainNonASCII::ReadCookie" | "WarnDomainNonASCII::SetCookie" => {
            Some(("cookieWarnDomainNonAscii.md", None))
        }
        "ExcludeDomainNonASCII::ReadCookie" | "ExcludeDomainNonASCII::SetCookie" => {
            Some(("cookieExcludeDomainNonAscii.md", None))
        }
        "CrossSiteRedirectDowngradeChangesInclusion" => {
            Some(("cookieCrossSiteRedirectDowngrade.md", Some(FILE_BUG)))
        }
        "ExcludePortMismatch" => Some(("cookieExcludePortMismatch.md", None)),
        "ExcludeSchemeMismatch" => Some(("cookieExcludeSchemeMismatch.md", None)),
        _ => None,
    };
    Some(Kind {
        primary_key: format!("{code}-({cookie_id})-({request_id})"),
        code,
        description: file
            .map(|(file, link)| described(file, &link.into_iter().collect::<Vec<_>>(), true)),
    })
}

/// `details.request.requestId`, or `no-request`.
fn request_id(details: &Value) -> String {
    match &details["request"] {
        request if request.is_object() => template(request.get("requestId")),
        _ => "no-request".to_string(),
    }
}

fn csp(details: &Value) -> Option<Kind> {
    let kind = details.get("contentSecurityPolicyViolationType");
    let (file, link) = match kind.and_then(Value::as_str) {
        Some("kURLViolation") => (
            "cspURLViolation.md",
            (
                "https://developers.google.com/web/fundamentals/security/csp#source_allowlists",
                "Content Security Policy - Source allowlists",
            ),
        ),
        Some("kInlineViolation") => (
            "cspInlineViolation.md",
            (
                "https://developers.google.com/web/fundamentals/security/csp#inline_code_is_considered_harmful",
                "Content Security Policy - Inline code",
            ),
        ),
        Some("kEvalViolation") => (
            "cspEvalViolation.md",
            (
                "https://developers.google.com/web/fundamentals/security/csp#eval_too",
                "Content Security Policy - Eval",
            ),
        ),
        Some("kTrustedTypesSinkViolation") => (
            "cspTrustedTypesSinkViolation.md",
            (
                "https://web.dev/trusted-types/#fix-the-violations",
                "Trusted Types - Fix violations",
            ),
        ),
        Some("kTrustedTypesPolicyViolation") => (
            "cspTrustedTypesPolicyViolation.md",
            (
                "https://web.dev/trusted-types/",
                "Trusted Types - Policy violation",
            ),
        ),
        _ => ("", ("", "")),
    };
    Some(Kind {
        code: join(&[Some(&"ContentSecurityPolicyIssue".into()), kind], "::"),
        primary_key: stringify_keys(
            details,
            &[
                "blockedURL",
                "contentSecurityPolicyViolationType",
                "violatedDirective",
                "isReportOnly",
                "sourceCodeLocation",
                "url",
                "lineNumber",
                "columnNumber",
                "violatingNodeId",
            ],
        ),
        description: (!file.is_empty()).then(|| described(file, &[link], true)),
    })
}

fn blocked_by_response(details: &Value) -> Option<Kind> {
    let reason = details["reason"].as_str()?;
    let (file, links): (Option<&str>, &[(&str, &str)]) = match reason {
        "CorpNotSameOriginAfterDefaultedToSameOriginByCoep" => (
            Some("CoepCorpNotSameOriginAfterDefaultedToSameOriginByCoep.md"),
            &[COOP_COEP, SAME_ORIGIN],
        ),
        "CorpNotSameSite" => (Some("CoepCorpNotSameSite.md"), &[COOP_COEP, SAME_ORIGIN]),
        "CorpNotSameOrigin" => (Some("CoepCorpNotSameOrigin.md"), &[COOP_COEP, SAME_ORIGIN]),
        "CoepFrameResourceNeedsCoepHeader" => {
            (Some("CoepFrameResourceNeedsCoepHeader.md"), &[COOP_COEP])
        }
        // DevTools spells its key `Iframe`: the protocol's `IFrame` finds no description.
        "CoopSandboxedIFrameCannotNavigateToCoopPage" => (None, &[]),
        _ => return None,
    };
    Some(Kind {
        code: format!("CrossOriginEmbedderPolicyIssue::{reason}"),
        primary_key: format!(
            "CrossOriginEmbedderPolicyIssue::{reason}-({})",
            template(details["request"].as_object()?.get("requestId"))
        ),
        description: file.map(|file| described(file, links, true)),
    })
}

fn shared_dictionary(details: &Value) -> Option<Kind> {
    let error = details["sharedDictionaryError"].as_str();
    let known = error.filter(|error| SHARED_DICTIONARY_ERRORS.contains(error));
    let links = [(
        "https://datatracker.ietf.org/doc/draft-ietf-httpbis-compression-dictionary/",
        "Compression Dictionary Transport",
    )];
    keyed(
        details,
        format!(
            "SharedDictionaryIssue::{}",
            known.unwrap_or("WriteErrorUnknown")
        ),
        known.map(|error| described(format!("sharedDictionary{error}.md"), &links, true)),
    )
}

fn cors(details: &Value) -> Option<Kind> {
    let error = details["corsErrorStatus"]["corsError"].as_str()?;
    let code = match error {
        "InvalidAllowMethodsPreflightResponse"
        | "InvalidAllowHeadersPreflightResponse"
        | "PreflightMissingAllowOriginHeader"
        | "PreflightMultipleAllowOriginValues"
        | "PreflightInvalidAllowOriginValue"
        | "MissingAllowOriginHeader"
        | "MultipleAllowOriginValues"
        | "InvalidAllowOriginValue" => "InvalidHeaders",
        "PreflightWildcardOriginNotAllowed" | "WildcardOriginNotAllowed" => {
            "WildcardOriginWithCredentials"
        }
        "PreflightInvalidStatus" | "PreflightDisallowedRedirect" | "InvalidResponse" => {
            "PreflightResponseInvalid"
        }
        "AllowOriginMismatch" | "PreflightAllowOriginMismatch" => "OriginMismatch",
        "InvalidAllowCredentials" | "PreflightInvalidAllowCredentials" => {
            "AllowCredentialsRequired"
        }
        "MethodDisallowedByPreflightResponse"
        | "HeaderDisallowedByPreflightResponse"
        | "RedirectContainsCredentials"
        | "DisallowedByMode"
        | "CorsDisabledScheme"
        | "PreflightMissingAllowExternal"
        | "PreflightInvalidAllowExternal"
        | "InsecureLocalNetwork"
        | "NoCorsRedirectModeNotFollow"
        | "InvalidLocalNetworkAccess"
        | "LocalNetworkAccessPermissionDenied" => error,
        // DevTools' constructor throws on an unknown error: no issue.
        _ => return None,
    };
    let link = match code {
        "InsecureLocalNetwork" | "LocalNetworkAccessPermissionDenied" => LOCAL_NETWORK,
        _ => CORS,
    };
    let file = match code {
        "InvalidHeaders" => Some("corsInvalidHeaderValues.md".to_string()),
        "WildcardOriginWithCredentials" => Some("corsWildcardOriginNotAllowed.md".to_string()),
        "CorsDisabledScheme" => Some("corsDisabledScheme.md".to_string()),
        "InsecureLocalNetwork" | "LocalNetworkAccessPermissionDenied" => {
            Some("corsLocalNetworkAccessPermissionDenied.md".to_string())
        }
        "PreflightMissingAllowExternal"
        | "PreflightInvalidAllowExternal"
        | "InvalidLocalNetworkAccess" => None,
        code => Some(format!("cors{code}.md")),
    };
    keyed(
        details,
        format!("CorsIssue::{code}"),
        file.map(|file| described(file, &[link], false)),
    )
}

fn generic(details: &Value) -> Option<Kind> {
    let error = details.get("errorType");
    let code = join(&[Some(&"GenericIssue".into()), error], "::");
    let description = error
        .and_then(Value::as_str)
        .and_then(|error| GENERIC.iter().find(|(name, ..)| *name == error))
        .map(|(name, links)| described(format!("generic{name}.md"), links, true));
    Some(Kind {
        primary_key: format!(
            "{code}-({})-({})-({})-({})",
            template(details.get("frameId")),
            template(details.get("violatingNodeId")),
            template(details.get("violatingNodeAttribute")),
            request_id(details)
        ),
        code,
        description,
    })
}

fn deprecation(details: &Value) -> Option<Kind> {
    let kind = details.get("type");
    let found = kind
        .and_then(Value::as_str)
        .and_then(|kind| DEPRECATIONS.iter().find(|(name, ..)| *name == kind));
    let mut links = Vec::new();
    let mut message = String::new();
    if let Some((_, text, feature, milestone)) = found {
        message = text.to_string();
        if let Some(feature) = feature {
            links.push((
                format!("https://chromestatus.com/feature/{feature}"),
                "Check the feature status page for more details".to_string(),
            ));
        }
        if let Some(milestone) = milestone {
            links.push((
                "https://chromiumdash.appspot.com/schedule".to_string(),
                format!("This change will go into effect with milestone {milestone}"),
            ));
        }
    }
    Some(Kind {
        code: join(&[Some(&"DeprecationIssue".into()), kind], "::"),
        primary_key: stringify(details),
        description: Some(Description {
            file: "deprecation.md".into(),
            links,
            substitutions: Some(vec![("PLACEHOLDER_message".into(), message)]),
        }),
    })
}

fn property_rule(details: &Value) -> Option<Kind> {
    let json = stringify(details);
    let description = if details["propertyRuleIssueReason"] == "InvalidName" {
        described("propertyRuleInvalidNameIssue.md", &[], false)
    } else {
        let name = match details["propertyRuleIssueReason"].as_str() {
            Some("InvalidInherits") => "inherits",
            Some("InvalidInitialValue") => "initial-value",
            Some("InvalidSyntax") => "syntax",
            _ => "",
        };
        let value = match details.get("propertyValue") {
            Some(value) if truthy(value) => format!(": {}", template(Some(value))),
            _ => String::new(),
        };
        Description {
            file: "propertyRuleIssue.md".into(),
            links: Vec::new(),
            substitutions: Some(vec![(
                "PLACEHOLDER_property".into(),
                format!("{name}{value}"),
            )]),
        }
    };
    Some(Kind {
        code: json.clone(),
        primary_key: json,
        description: Some(description),
    })
}

/// JavaScript's truthiness of a JSON value.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(value) => *value,
        Value::Number(number) => number.as_f64().is_some_and(|n| n != 0.0),
        Value::String(text) => !text.is_empty(),
        _ => true,
    }
}

fn cookie_deprecation_metadata(details: &Value) -> Option<Kind> {
    let set = details["operation"] == "SetCookie";
    let mut substitutions = Vec::new();
    let file = if details.get("isOptOutTopLevel").is_some_and(truthy) {
        substitutions.push((
            "PLACEHOLDER_optOutPercentage".to_string(),
            template(details.get("optOutPercentage")),
        ));
        if set {
            "cookieWarnMetadataGrantSetOptOut.md"
        } else {
            "cookieWarnMetadataGrantReadOptOut.md"
        }
    } else if set {
        "cookieWarnMetadataGrantSet.md"
    } else {
        "cookieWarnMetadataGrantRead.md"
    };
    keyed(
        details,
        format!(
            "CookieDeprecationMetadataIssue_{}",
            template(details.get("operation"))
        ),
        Some(Description {
            file: file.into(),
            links: vec![(
                "https://goo.gle/changes-to-chrome-browsing".into(),
                "Changes to Chrome’s treatment of third-party cookies".into(),
            )],
            substitutions: Some(substitutions),
        }),
    )
}

fn element_accessibility(details: &Value) -> Option<Kind> {
    let reason = details.get("elementAccessibilityIssueReason");
    let name = reason.and_then(Value::as_str).unwrap_or_default();
    let interactive = matches!(
        name,
        "InteractiveContentOptionChild" | "InteractiveContentSummaryDescendant"
    );
    let description = if details.get("hasDisallowedAttributes").is_some_and(truthy) && !interactive
    {
        Some(described(
            "selectElementAccessibilityInteractiveContentAttributesSelectDescendant.md",
            &[],
            false,
        ))
    } else {
        match name {
            "DisallowedSelectChild"
            | "DisallowedOptGroupChild"
            | "NonPhrasingContentOptionChild"
            | "InteractiveContentOptionChild"
            | "InteractiveContentLegendChild" => {
                Some(format!("selectElementAccessibility{name}.md"))
            }
            "InteractiveContentSummaryDescendant" => {
                Some(format!("summaryElementAccessibility{name}.md"))
            }
            _ => None,
        }
        .map(|file| described(file, &[], true))
    };
    keyed(
        details,
        join(&[Some(&"ElementAccessibilityIssue".into()), reason], "::"),
        description,
    )
}

fn sri_message_signature(details: &Value) -> Option<Kind> {
    let error = details.get("error");
    let mut code = format!("SRIMessageSignatureIssue::{}", template(error));
    let mut substitutions = Vec::new();
    match error.and_then(Value::as_str) {
        Some("ValidationFailedSignatureMismatch") => {
            code.push_str(&template(details.get("signatureBase")));
            let base = details["signatureBase"].as_str().unwrap_or_default();
            substitutions.push(("PLACEHOLDER_signatureBase".into(), base.to_string()));
        }
        Some("ValidationFailedIntegrityMismatch") => {
            let assertions: Vec<String> = details["integrityAssertions"]
                .as_array()?
                .iter()
                .map(|item| template(Some(item)))
                .collect();
            code.push_str(&assertions.join(","));
            substitutions.push((
                "PLACEHOLDER_integrityAssertions".into(),
                assertions.join("\n"),
            ));
        }
        _ => {}
    }
    let links = [
        (
            "https://www.rfc-editor.org/rfc/rfc9421.html",
            "HTTP Message Signatures (RFC9421)",
        ),
        (
            "https://wicg.github.io/signature-based-sri/",
            "Signature-based Integrity",
        ),
    ];
    let mut description = described(format!("sri{}.md", template(error)), &links, true);
    description.substitutions = Some(substitutions);
    keyed(details, code, Some(description))
}

fn permission_element(details: &Value) -> Option<Kind> {
    let kind = details.get("issueType");
    let text = |name: &str| {
        details
            .get(name)
            .filter(|value| truthy(value))
            .map(|value| template(Some(value)))
            .unwrap_or_default()
    };
    let with_type = |file: &str| -> Option<(String, Vec<(String, String)>)> {
        Some((
            file.to_string(),
            vec![("PLACEHOLDER_Type".into(), text("type"))],
        ))
    };
    let name = kind.and_then(Value::as_str).unwrap_or_default();
    let found = match name {
        "InvalidType"
        | "FencedFrameDisallowed"
        | "CspFrameAncestorsMissing"
        | "PaddingRightUnsupported"
        | "PaddingBottomUnsupported"
        | "InsetBoxShadowUnsupported"
        | "RequestInProgress"
        | "UntrustedEvent"
        | "RegistrationFailed"
        | "TypeNotSupported"
        | "InvalidTypeActivation"
        | "SecurityChecksFailed"
        | "InvalidDisplayStyle"
        | "NonOpaqueColor"
        | "LowContrast"
        | "FontSizeTooSmall"
        | "FontSizeTooLarge"
        | "InvalidSizeValue" => with_type(&format!("permissionElement{name}.md")),
        "PermissionsPolicyBlocked" => Some((
            "permissionElementPermissionsPolicyBlocked.md".to_string(),
            vec![
                ("PLACEHOLDER_Type".into(), text("type")),
                ("PLACEHOLDER_PermissionName".into(), text("permissionName")),
            ],
        )),
        "ActivationDisabled" => {
            let occluder = details.get("occluderNodeInfo").is_some_and(truthy);
            let parent = details.get("occluderParentNodeInfo").is_some_and(truthy);
            let reason = (
                "PLACEHOLDER_DisableReason".to_string(),
                text("disableReason"),
            );
            let kind = ("PLACEHOLDER_Type".to_string(), text("type"));
            let occluder_info = (
                "PLACEHOLDER_OccluderInfo".to_string(),
                text("occluderNodeInfo"),
            );
            Some(match (occluder, parent) {
                (true, true) => (
                    "permissionElementActivationDisabledWithOccluderParent.md".to_string(),
                    vec![
                        reason,
                        occluder_info,
                        kind,
                        (
                            "PLACEHOLDER_OccluderParentInfo".into(),
                            text("occluderParentNodeInfo"),
                        ),
                    ],
                ),
                (true, false) => (
                    "permissionElementActivationDisabledWithOccluder.md".to_string(),
                    vec![reason, occluder_info, kind],
                ),
                _ => (
                    "permissionElementActivationDisabled.md".to_string(),
                    vec![reason, kind],
                ),
            })
        }
        "GeolocationDeprecated" => None,
        _ => None,
    };
    let description = match (name, found) {
        ("GeolocationDeprecated", _) => Some(described(
            "permissionElementGeolocationDeprecated.md",
            &[],
            false,
        )),
        (_, Some((file, substitutions))) => Some(Description {
            file,
            links: Vec::new(),
            substitutions: Some(substitutions),
        }),
        (_, None) => None,
    };
    Some(Kind {
        code: join(&[Some(&"PermissionElementIssue".into()), kind], "::"),
        primary_key: format!("PermissionElementIssue-{}", stringify(details)),
        description,
    })
}

/// `GenericIssueErrorType`s DevTools describes, with their links.
const GENERIC: &[(&str, &[(&str, &str)])] = &[
    (
        "FormLabelForNameError",
        &[(
            "https://html.spec.whatwg.org/multipage/forms.html#attr-label-for",
            "HTML Standard",
        )],
    ),
    ("FormInputWithNoLabelError", &[]),
    ("FormAutocompleteAttributeEmptyError", &[]),
    (
        "FormDuplicateIdForInputError",
        &[(
            "https://web.dev/learn/forms/autofill/#how-does-autofill-work",
            "How does autofill work?",
        )],
    ),
    ("FormAriaLabelledByToNonExistingIdError", &[LABELS]),
    (
        "FormEmptyIdAndNameAttributesForInputError",
        &[(
            "https://developer.mozilla.org/en-US/docs/Web/HTML/Element/input",
            "The form input element",
        )],
    ),
    (
        "FormInputAssignedAutocompleteValueToIdOrNameAttributeError",
        &[AUTOCOMPLETE],
    ),
    ("FormLabelForMatchesNonExistingIdError", &[LABELS]),
    ("FormLabelHasNeitherForNorNestedInputError", &[LABELS]),
    (
        "FormInputHasWrongButWellIntendedAutocompleteValueError",
        &[AUTOCOMPLETE],
    ),
    (
        "ResponseWasBlockedByORB",
        &[(
            "https://www.chromium.org/Home/chromium-security/corb-for-developers/",
            "CORB explainer",
        )],
    ),
    (
        "NavigationEntryMarkedSkippable",
        &[(
            "https://chromium.googlesource.com/chromium/src/+/main/docs/history_manipulation_intervention.md",
            "History manipulation intervention explainer",
        )],
    ),
    (
        "BackUINavigationWouldSkipAd",
        &[(
            "https://chromium.googlesource.com/chromium/src/+/main/docs/history_manipulation_intervention.md",
            "Back-to-ad intervention explainer",
        )],
    ),
    ("FormModelContextMissingToolName", &[]),
    ("FormModelContextMissingToolDescription", &[]),
    ("FormModelContextParameterMissingTitleAndDescription", &[]),
    ("FormModelContextRequiredParameterMissingName", &[]),
    ("FormModelContextParameterMissingName", &[]),
    (
        "GeolocationPromptWithoutUserGesture",
        &[(
            "https://web.dev/articles/permissions-best-practices",
            "Web permissions best practices",
        )],
    ),
];

/// `FederatedAuthRequestIssueReason`s DevTools describes: file and link.
const FEDERATED_AUTH: &[(&str, &str, (&str, &str))] = &[
    (
        "TooManyRequests",
        "federatedAuthRequestTooManyRequests.md",
        FEDCM,
    ),
    (
        "WellKnownBlockedByConnectionAllowlist",
        "federatedAuthRequestWellKnownBlockedByConnectionAllowlist.md",
        ALLOWLISTS,
    ),
    (
        "ConfigHttpNotFound",
        "federatedAuthRequestManifestHttpNotFound.md",
        FEDCM,
    ),
    (
        "ConfigNoResponse",
        "federatedAuthRequestManifestNoResponse.md",
        FEDCM,
    ),
    (
        "ConfigBlockedByConnectionAllowlist",
        "federatedAuthRequestConfigBlockedByConnectionAllowlist.md",
        ALLOWLISTS,
    ),
    (
        "ConfigInvalidResponse",
        "federatedAuthRequestManifestInvalidResponse.md",
        FEDCM,
    ),
    (
        "ErrorFetchingSignin",
        "federatedAuthRequestErrorFetchingSignin.md",
        FEDCM,
    ),
    (
        "InvalidSigninResponse",
        "federatedAuthRequestInvalidSigninResponse.md",
        FEDCM,
    ),
    (
        "AccountsHttpNotFound",
        "federatedAuthRequestAccountsHttpNotFound.md",
        FEDCM,
    ),
    (
        "AccountsNoResponse",
        "federatedAuthRequestAccountsNoResponse.md",
        FEDCM,
    ),
    (
        "AccountsBlockedByConnectionAllowlist",
        "federatedAuthRequestAccountsBlockedByConnectionAllowlist.md",
        ALLOWLISTS,
    ),
    (
        "AccountsInvalidResponse",
        "federatedAuthRequestAccountsInvalidResponse.md",
        FEDCM,
    ),
    (
        "IdTokenHttpNotFound",
        "federatedAuthRequestIdTokenHttpNotFound.md",
        FEDCM,
    ),
    (
        "IdTokenNoResponse",
        "federatedAuthRequestIdTokenNoResponse.md",
        FEDCM,
    ),
    (
        "IdTokenBlockedByConnectionAllowlist",
        "federatedAuthRequestIdTokenBlockedByConnectionAllowlist.md",
        ALLOWLISTS,
    ),
    (
        "IdTokenInvalidResponse",
        "federatedAuthRequestIdTokenInvalidResponse.md",
        FEDCM,
    ),
    (
        "IdTokenInvalidRequest",
        "federatedAuthRequestIdTokenInvalidRequest.md",
        FEDCM,
    ),
    ("ErrorIdToken", "federatedAuthRequestErrorIdToken.md", FEDCM),
    ("Canceled", "federatedAuthRequestCanceled.md", FEDCM),
];

const SHARED_DICTIONARY_ERRORS: &[&str] = &[
    "UseErrorCrossOriginNoCorsRequest",
    "UseErrorDictionaryLoadFailure",
    "UseErrorMatchingDictionaryNotUsed",
    "UseErrorUnexpectedContentDictionaryHeader",
    "WriteErrorCossOriginNoCorsRequest",
    "WriteErrorDisallowedBySettings",
    "WriteErrorExpiredResponse",
    "WriteErrorFeatureDisabled",
    "WriteErrorInsufficientResources",
    "WriteErrorInvalidMatchField",
    "WriteErrorInvalidStructuredHeader",
    "WriteErrorInvalidTTLField",
    "WriteErrorNavigationRequest",
    "WriteErrorNoMatchField",
    "WriteErrorNonIntegerTTLField",
    "WriteErrorNonListMatchDestField",
    "WriteErrorNonSecureContext",
    "WriteErrorNonStringIdField",
    "WriteErrorNonStringInMatchDestList",
    "WriteErrorNonStringMatchField",
    "WriteErrorNonTokenTypeField",
    "WriteErrorRequestAborted",
    "WriteErrorShuttingDown",
    "WriteErrorTooLongIdField",
    "WriteErrorUnsupportedType",
];

const EMAIL_VERIFICATION_REASONS: &[&str] = &[
    "InvalidEmail",
    "DnsFetchFailed",
    "DnsInvalidRecord",
    "WellKnownHttpNotFound",
    "WellKnownNoResponse",
    "WellKnownInvalidResponse",
    "WellKnownListEmpty",
    "WellKnownInvalidContentType",
    "WellKnownMissingIssuanceEndpoint",
    "WellKnownIssuanceEndpointCrossOrigin",
    "WellKnownUnsupportedSigningAlgorithm",
    "TokenHttpNotFound",
    "TokenNoResponse",
    "TokenInvalidResponse",
    "TokenInvalidContentType",
    "TokenMalformedSdJwt",
    "TokenInvalidSdJwt",
    "KeyBindingSigningFailed",
    "RpOriginIsOpaque",
    "WellKnownMissingAccountsEndpoint",
    "UserLoggedOut",
    "WellKnownAccountsEndpointCrossOrigin",
    "AccountsHttpNotFound",
    "AccountsNoResponse",
    "AccountsInvalidResponse",
    "AccountsInvalidContentType",
    "AccountsEmptyList",
    "EmailVerificationWellKnownHttpNotFound",
    "EmailVerificationWellKnownNoResponse",
    "EmailVerificationWellKnownInvalidResponse",
    "EmailVerificationWellKnownInvalidContentType",
    "JwksHttpNotFound",
    "JwksInvalidResponse",
    "TokenVerificationSdJwtUnsupportedHeaderAlg",
    "TokenVerificationSdJwtMissingIss",
    "TokenVerificationSdJwtMissingIat",
    "TokenVerificationSdJwtMissingCnf",
    "TokenVerificationSdJwtMissingEmail",
    "TokenVerificationSdJwtInvalidIssuedAt",
    "TokenVerificationSdJwtInvalidIssuer",
    "TokenVerificationSdJwtJwksMissingKeys",
    "TokenVerificationSdJwtSignatureFailed",
    "TokenVerificationSdJwtInvalidEmailVerified",
    "TokenVerificationSdJwtInvalidEmail",
    "TokenVerificationSdJwtInvalidHolderKey",
    "TokenVerificationKbInvalidTyp",
    "TokenVerificationKbMissingAud",
    "TokenVerificationKbMissingNonce",
    "TokenVerificationKbMissingIat",
    "TokenVerificationKbMissingSdHash",
    "TokenVerificationKbInvalidIssuedAt",
    "TokenVerificationKbInvalidAudience",
    "TokenVerificationKbInvalidNonce",
    "TokenVerificationKbInvalidSdHash",
    "TokenVerificationKbMissingCnf",
    "TokenVerificationKbSignatureFailed",
];

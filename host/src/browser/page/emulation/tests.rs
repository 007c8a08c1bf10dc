use super::*;

/// `from.next(...)` for a spec like `viewport=1x1|cpu=4` (keys abbreviated).
fn emulate(from: &Emulation, spec: &str) -> Result<Emulation, String> {
    let mut request = EmulateRequest::default();
    for (key, value) in spec.split('|').filter_map(|pair| pair.split_once('=')) {
        let value = Some(value.to_string());
        match key {
            "network" => request.network_conditions = value,
            "cpu" => request.cpu_throttling_rate = value.and_then(|v| v.parse().ok()),
            "geo" => request.geolocation = value,
            "ua" => request.user_agent = value,
            "scheme" => request.color_scheme = value,
            "viewport" => request.viewport = value,
            _ => request.extra_http_headers = value,
        }
    }
    from.next(request)
}

fn state(spec: &str) -> Emulation {
    emulate(&Emulation::default(), spec).expect("valid request")
}

#[test]
fn viewport_strings_parse_like_the_reference() {
    let v = parse_viewport("1280x800x2,mobile,touch,landscape").expect("valid");
    assert_eq!(
        (v.width, v.height, v.device_scale_factor),
        (1280, 800, Some(2.0))
    );
    assert!(v.is_mobile && v.has_touch && v.is_landscape);
    let plain = parse_viewport("800x600,bogus").expect("valid");
    assert_eq!((plain.device_scale_factor, plain.is_mobile), (None, false));
    for bad in "axb 800 800.5x600 -1x600 800x600xq x 0x600 800x600x".split(' ') {
        assert!(parse_viewport(bad).is_err(), "{bad} should be refused");
    }
    let json = parse_viewport("1280x800x2,landscape")
        .expect("valid")
        .to_json();
    let text = r#"{"deviceScaleFactor":2,"isMobile":false,"hasTouch":false,"isLandscape":true,"width":1280,"height":800}"#;
    assert_eq!(json.to_string(), text);
}

#[test]
fn geolocation_checks_puppeteer_ranges() {
    let at = parse_geolocation("48.137154,-0").expect("valid");
    assert_eq!((at.latitude, at.longitude), (48.137154, 0.0));
    let latitude = "Invalid latitude \"100\". Latitude must be a number between -90 and 90.";
    assert_eq!(parse_geolocation("100,5"), Err(latitude.into()));
    let longitude = "Invalid longitude \"NaN\". Longitude must be a number between -180 and 180.";
    assert_eq!(parse_geolocation("5"), Err(longitude.into()));
    assert!(parse_geolocation("48.1").is_err() && parse_geolocation("5,-180.5").is_err());
}

#[test]
fn every_call_sets_the_whole_state_but_headers() {
    let all =
        r#"network=Slow 3G|cpu=4|geo=1,2|ua=UA|scheme=dark|viewport=4x3|headers={"X-Test": "v"}"#;
    let second = emulate(&state(all), "").expect("valid");
    assert!(second.network.is_none() && second.geolocation.is_none());
    assert!(second.user_agent.is_none() && second.color_scheme.is_none());
    assert!(second.viewport.is_none() && second.cpu_multiplier() == 1.0);
    let kept = vec![("X-Test".to_string(), "v".to_string())];
    assert_eq!(second.extra_http_headers, Some(kept));
    let third = emulate(&second, "headers=|ua=|scheme=auto").expect("valid");
    assert!(third.extra_http_headers.is_none() && third.user_agent.is_none());
    assert!(third.color_scheme.is_none());
}

#[test]
fn invalid_requests_name_the_problem() {
    let error = |spec: &str| emulate(&Emulation::default(), spec).expect_err("refused");
    let network = "Invalid enum value. Expected 'Offline' | 'Slow 3G' | 'Fast 3G' | 'Slow 4G' | 'Fast 4G', received 'Slow 11G' at networkConditions";
    assert_eq!(error("network=Slow 11G"), network);
    assert!(error("cpu=21").ends_with("less than or equal to 20 at cpuThrottlingRate"));
    assert!(error("cpu=0.5").ends_with("greater than or equal to 1 at cpuThrottlingRate"));
    assert!(error("scheme=blue").ends_with("received 'blue' at colorScheme"));
    let object = "Invalid JSON for headers: Headers must be a JSON object";
    assert_eq!(error("headers=[1]"), object);
    assert!(error("headers=nope").starts_with("Invalid JSON for headers: "));
    let number = "Expected value of header \"a\" to be String, but \"number\" is found.";
    assert_eq!(error(r#"headers={"a": 1}"#), number);
}

#[test]
fn presets_and_timeouts_match_the_reference() {
    let numbers = |p: NetworkPreset| [p.download, p.upload, p.latency];
    let [_, slow3g, fast3g, slow4g, fast4g] = NETWORK_PRESETS.map(numbers);
    let js = |mbps: f64, share: f64| ((mbps * 1000.0 * 1000.0) / 8.0) * share;
    assert_eq!(slow3g, [js(0.5, 0.8), js(0.5, 0.8), 400.0 * 5.0]);
    assert_eq!(fast3g, [js(1.6, 0.9), js(0.75, 0.9), 150.0 * 3.75]);
    assert_eq!(slow4g, fast3g);
    assert_eq!(fast4g, [js(9.0, 0.9), js(1.5, 0.9), 60.0 * 2.75]);
    let offline =
        r#"{"offline":true,"latency":0.0,"downloadThroughput":0.0,"uploadThroughput":0.0}"#;
    assert_eq!(
        state("network=Offline").commands("UA")[0].1.to_string(),
        offline
    );
    let multipliers = NETWORK_PRESETS.map(|p| p.timeout_multiplier);
    assert_eq!(multipliers, [1.0, 10.0, 5.0, 2.5, 1.0]);
    let throttled = state("network=Slow 3G|cpu=1.5");
    assert_eq!(throttled.navigation_timeout(), Duration::from_secs(150));
    assert_eq!(throttled.action_timeout(), Duration::from_millis(7500));
    let plain = Emulation::default();
    assert_eq!(plain.navigation_timeout(), Duration::from_secs(10));
    assert_eq!(plain.action_timeout(), Duration::from_secs(5));
}

#[test]
fn lines_read_like_the_reference() {
    assert!(Emulation::default().lines().0.is_empty());
    let all =
        "network=Slow 3G|cpu=1.5|geo=48.137154,-0|ua=UA|scheme=dark|viewport=8x6,mobile,touch";
    let (lines, keys) = state(all).lines();
    let viewport = r#"{"isMobile":true,"hasTouch":true,"isLandscape":false,"width":8,"height":6}"#;
    let expected = [
        "Emulating network conditions: Slow 3G".to_string(),
        "Default navigation timeout set to 150000 ms".into(),
        "Emulating geolocation: latitude=48.137154, longitude=0".into(),
        format!("Emulating viewport: {viewport}"),
        "Emulating user agent: UA".into(),
        "Emulating CPU throttling: 1.5x slowdown".into(),
        "Emulating color scheme: dark".into(),
    ];
    assert_eq!(lines, expected);
    let geolocation = r#"{"latitude":48.137154,"longitude":0}"#;
    let keys_text = format!(
        r#"{{"networkConditions":"Slow 3G","navigationTimeout":150000,"geolocation":{geolocation},"viewport":{viewport},"userAgent":"UA","cpuThrottlingRate":1.5,"colorScheme":"dark"}}"#
    );
    assert_eq!(Value::Object(keys).to_string(), keys_text);
    let four = state("cpu=4").lines().0;
    assert_eq!(four, ["Emulating CPU throttling: 4x slowdown"]);
    assert!(state("cpu=1").lines().0.is_empty());
    assert_eq!(js_number_text(1.5e-7), "1.5e-7");
}

#[test]
fn reload_follows_mobile_and_touch_changes() {
    let none = Emulation::default();
    assert!(state("viewport=400x300,mobile").reload_needed(&none));
    assert!(none.reload_needed(&state("viewport=400x300,touch")));
    assert!(!state("viewport=400x300").reload_needed(&none));
    let mobile = state("viewport=800x600,mobile");
    assert!(!state("viewport=400x300x2,mobile").reload_needed(&mobile));
}

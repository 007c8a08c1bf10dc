//! Coordinate input (`click_at`, `--experimentalVision`): a click where a screenshot showed
//! something, without a snapshot uid.

use super::McpPage;
use super::input;
use super::settle;

impl McpPage {
    /// Clicks at viewport coordinates `count` times, then waits for the page to settle. Returns
    /// the URL it navigated to, if it did.
    pub async fn click_at(&self, x: f64, y: f64, count: u32) -> Result<Option<String>, String> {
        if !x.is_finite() || !y.is_finite() {
            return Err(format!(
                "The coordinates ({x}, {y}) are not finite numbers."
            ));
        }
        let click = input::click_at(&self.page, (x, y), count);
        let (_, navigated) = settle::after_action(self, click).await?;
        Ok(navigated)
    }
}

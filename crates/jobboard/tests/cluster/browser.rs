//! A browser through the balancer, for the board's forms and the dashboard.

use reqwest::redirect::Policy;

use crate::{common::Resp, harness::Cluster, observe::secs};

/// A browser through the balancer: keeps its cookies, sends `Origin` as a browser posting a
/// form of this site does, and shows redirects instead of following them.
pub struct Browser {
    base: String,
    client: reqwest::Client,
}

impl Browser {
    pub fn new(c: &Cluster) -> Browser {
        jobboard::init_tls();
        Browser {
            base: c.base.clone(),
            client: reqwest::Client::builder()
                .no_proxy()
                .cookie_store(true)
                .redirect(Policy::none())
                .timeout(secs(30))
                .build()
                .unwrap(),
        }
    }

    pub async fn get(&self, path: &str) -> Resp {
        crate::harness::page(&self.client, &self.base, path).await
    }

    /// Posts a form of page `page` to `action`, with the page's anti-forgery token.
    pub async fn submit(&self, page: &str, action: &str, fields: &[(&str, &str)]) -> Resp {
        let form = self.get(page).await;
        form.expect(200);
        let token = form
            .html()
            .select(&scraper::Selector::parse("input[name=csrf]").unwrap())
            .next()
            .and_then(|e| e.value().attr("value").map(str::to_string))
            .unwrap_or_else(|| panic!("no anti-forgery token on {page}: {}", form.text));
        let mut all = fields.to_vec();
        all.push(("csrf", &token));
        Resp::read(
            self.client
                .post(format!("{}{action}", self.base))
                .header("accept", "text/html")
                .header("origin", &self.base)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(serde_urlencoded::to_string(&all).unwrap())
                .send()
                .await
                .expect("POST form"),
        )
        .await
    }
}

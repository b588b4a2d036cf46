//! Integration tests: the real server over HTTP, on SQLite and on PostgreSQL.

mod common;

mod analytics;
mod analytics_visitors;
mod applications;
mod board;
mod board_apply;
mod board_cms;
mod board_cms_submit;
mod board_feeds;
mod board_post;
mod board_visits;
mod cms;
mod cms_rules;
mod dashboard;
mod employer_mail;
mod event_delivery;
mod foundation;
mod hardening;
mod hardening_input;
mod jobs;
mod jobs_apply_method;
mod mail;
mod mail_nodes;
mod members;
mod members_access;
mod members_cancel;
mod members_read;
mod plans;
mod site_analytics;
mod smtp_sink;
mod standard_webhooks;
mod web;
mod webhook_receiver;
mod webhooks;
mod webhooks_recover;

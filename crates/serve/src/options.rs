//! `binlogd serve` options: `--datadir`, `--port`, `--bind`,
//! `--defaults-file`, and `--name=value` for any system variable (dashes or
//! underscores, as mysqld accepts), also read from the `[binlogd]` and
//! `[mysqld]` sections of a my.cnf-style file. The command line wins over
//! the file.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOptions {
    pub datadir: PathBuf,
    pub bind: IpAddr,
    pub port: u16,
    /// Every other `name = value`, names normalised to underscores.
    pub variables: Vec<(String, String)>,
}

fn normalise(name: &str) -> String {
    name.trim().trim_start_matches("--").replace('-', "_").to_ascii_lowercase()
}

/// `name=value` pairs of the `[binlogd]` and `[mysqld]` sections.
pub fn parse_option_file(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut in_section = false;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            let section = section.strip_suffix(']').ok_or_else(|| format!("line {}: bad section header", number + 1))?;
            in_section = matches!(section.trim(), "binlogd" | "mysqld");
            continue;
        }
        if !in_section {
            continue;
        }
        let (name, value) = line.split_once('=').unwrap_or((line, "ON"));
        let value = value.trim().trim_matches('"').trim_matches('\'');
        pairs.push((normalise(name), value.to_string()));
    }
    Ok(pairs)
}

impl ServeOptions {
    pub fn parse(args: &[String]) -> Result<ServeOptions, String> {
        let mut command_line = Vec::new();
        let mut defaults_file = None;
        let mut index = 0;
        while index < args.len() {
            let arg = &args[index];
            let Some(body) = arg.strip_prefix("--") else {
                return Err(format!("unexpected argument '{arg}'"));
            };
            let (name, value) = match body.split_once('=') {
                Some((name, value)) => (normalise(name), value.to_string()),
                None => {
                    let name = normalise(body);
                    // `--port 3307` as well as `--port=3307`; a bare flag is ON.
                    match args.get(index + 1) {
                        Some(next) if !next.starts_with("--") => {
                            index += 1;
                            (name, next.clone())
                        }
                        _ => (name, "ON".to_string()),
                    }
                }
            };
            if name == "defaults_file" {
                defaults_file = Some(PathBuf::from(value));
            } else {
                command_line.push((name, value));
            }
            index += 1;
        }
        let mut pairs = match defaults_file {
            Some(path) => {
                let text = std::fs::read_to_string(&path).map_err(|error| format!("{}: {error}", path.display()))?;
                parse_option_file(&text).map_err(|error| format!("{}: {error}", path.display()))?
            }
            None => Vec::new(),
        };
        pairs.extend(command_line);
        let mut options = ServeOptions {
            datadir: PathBuf::from("./binlogd-data"),
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 3306,
            variables: Vec::new(),
        };
        for (name, value) in pairs {
            match name.as_str() {
                "datadir" => options.datadir = PathBuf::from(value),
                "bind" | "bind_address" => options.bind = value.parse().map_err(|_| format!("--bind: '{value}' is not an IP address"))?,
                "port" => options.port = value.parse().map_err(|_| format!("--port: '{value}' is not a port number"))?,
                _ => {
                    options.variables.retain(|(existing, _)| *existing != name);
                    options.variables.push((name, value));
                }
            }
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn command_line_and_defaults() {
        let options = ServeOptions::parse(&args(&["--port=3307", "--sync-binlog=0", "--datadir", "/tmp/x"])).unwrap();
        assert_eq!(options.port, 3307);
        assert_eq!(options.datadir, PathBuf::from("/tmp/x"));
        assert_eq!(options.variables, vec![("sync_binlog".to_string(), "0".to_string())]);
        assert_eq!(ServeOptions::parse(&[]).unwrap().bind, IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert!(ServeOptions::parse(&args(&["--port=x"])).is_err());
    }

    #[test]
    fn option_file_sections() {
        let text = "[client]\nport=1\n[mysqld]\nmax-connections = 20\n# c\n[binlogd]\nskip_name_resolve\n";
        assert_eq!(
            parse_option_file(text).unwrap(),
            vec![("max_connections".into(), "20".into()), ("skip_name_resolve".into(), "ON".into())]
        );
    }
}

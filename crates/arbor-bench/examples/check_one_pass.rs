//! Checks, line by line, that the one-pass message-line reader agrees with the general path
//! on a file: `cargo run --release -p arbor-bench --example check_one_pass -- FILE...`
use arbor_core::entry::{parse_fields, parse_message_line, Entry, LineRef};

fn main() {
    let mut total = (0usize, 0usize);
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).expect("read");
        for (n, line) in data.split(|&b| b == b'\n').enumerate() {
            let Some(fast) = parse_message_line(line, LineRef::Owned(0), n + 1) else {
                continue;
            };
            total.0 += 1;
            let fields = parse_fields(line).expect("one pass accepted a line the scanner rejects");
            let slow = Entry::from_fields(line, fields, LineRef::Owned(0), n + 1);
            let same = fast.fields.members == slow.fields.members
                && fast.message.as_ref().map(|m| &m.members)
                    == slow.message.as_ref().map(|m| &m.members)
                && (
                    fast.etype.clone(),
                    fast.id.clone(),
                    fast.parent_id.clone(),
                    fast.timestamp.clone(),
                    fast.role.clone(),
                ) == (
                    slow.etype.clone(),
                    slow.id.clone(),
                    slow.parent_id.clone(),
                    slow.timestamp.clone(),
                    slow.role.clone(),
                );
            assert!(same, "{path}:{}: one pass differs", n + 1);
            total.1 += 1;
        }
    }
    println!("{} one-pass lines, {} identical", total.0, total.1);
}

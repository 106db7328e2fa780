//! Checks, line by line, that the one-pass message-line reader agrees with the general path
//! on a file, and that the compact reader (which finds the line end itself) agrees with both
//! wherever it accepts a line:
//! `cargo run --release -p arbor-bench --example check_one_pass -- FILE...`
use arbor_core::entry::{
    parse_fields, parse_message_line, parse_message_line_compact, Entry, LineRef,
};

fn main() {
    let mut total = (0usize, 0usize, 0usize);
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).expect("read");
        let mut offset = 0;
        for (n, line) in data.split(|&b| b == b'\n').enumerate() {
            let at = offset;
            offset += line.len() + 1;
            let compact = parse_message_line_compact(&data[at..], at, n + 1)
                .filter(|(_, len)| matches!(data.get(at + len), None | Some(b'\n')));
            let Some(fast) = parse_message_line(line, LineRef::Owned(0), n + 1) else {
                assert!(compact.is_none(), "{path}:{}: compact accepted more", n + 1);
                continue;
            };
            if let Some((c, len)) = compact {
                assert_eq!(len, line.len(), "{path}:{}: compact line end", n + 1);
                assert!(
                    c.fields.members == fast.fields.members
                        && c.message.as_ref().map(|m| &m.members)
                            == fast.message.as_ref().map(|m| &m.members)
                        && (&c.etype, &c.id, &c.parent_id, &c.timestamp, &c.role)
                            == (
                                &fast.etype,
                                &fast.id,
                                &fast.parent_id,
                                &fast.timestamp,
                                &fast.role
                            ),
                    "{path}:{}: compact differs",
                    n + 1
                );
                total.2 += 1;
            }
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
    println!(
        "{} one-pass lines, {} identical, {} of them read compact",
        total.0, total.1, total.2
    );
}

package binlogd.interop.connectorj;

import java.util.Objects;

/** Named verdicts; the harness prints `N passed, M failed` from them. */
final class Checks {
    int passed;
    int failed;

    void check(String name, boolean ok, String detail) {
        if (ok) {
            passed++;
            System.out.println("ok   " + name);
        } else {
            failed++;
            System.out.println("FAIL " + name + ": " + detail);
        }
    }

    void equal(String name, Object expected, Object actual) {
        check(name, Objects.equals(expected, actual), difference(expected, actual));
    }

    /** What differs: for two maps only the differing keys, else both values. */
    static String difference(Object expected, Object actual) {
        if (expected instanceof java.util.Map<?, ?> want && actual instanceof java.util.Map<?, ?> got) {
            StringBuilder text = new StringBuilder();
            java.util.Set<Object> keys = new java.util.LinkedHashSet<>(want.keySet());
            keys.addAll(got.keySet());
            for (Object key : keys) {
                if (!Objects.equals(want.get(key), got.get(key))) {
                    text.append("\n     ").append(key).append(": expected ").append(String.valueOf(want.get(key)))
                            .append(", got ").append(String.valueOf(got.get(key)));
                }
            }
            return text.toString();
        }
        return "expected " + expected + "\n     got      " + actual;
    }
}

package binlogd.interop.common;

import java.util.Objects;

/** Named verdicts; the harness prints `N passed, M failed` from them. */
public final class Checks {
    public int passed;
    public int failed;

    public void check(String name, boolean ok, String detail) {
        if (ok) {
            passed++;
            System.out.println("ok   " + name);
        } else {
            failed++;
            System.out.println("FAIL " + name + ": " + detail);
        }
    }

    public void equal(String name, Object expected, Object actual) {
        check(name, Objects.equals(expected, actual), difference(expected, actual));
    }

    /** What differs: for two maps only the differing keys, else both values. */
    public static String difference(Object expected, Object actual) {
        if (expected instanceof java.util.Map<?, ?> want && actual instanceof java.util.Map<?, ?> got) {
            StringBuilder text = new StringBuilder();
            java.util.Set<Object> keys = new java.util.LinkedHashSet<>(want.keySet());
            keys.addAll(got.keySet());
            for (Object key : keys) {
                if (want.get(key) instanceof java.util.List<?> wantList && got.get(key) instanceof java.util.List<?> gotList) {
                    if (!wantList.equals(gotList)) {
                        text.append("\n     ").append(key).append(": ").append(listDifference(wantList, gotList));
                    }
                } else if (!Objects.equals(want.get(key), got.get(key))) {
                    text.append("\n     ").append(key).append(": expected ").append(abbreviate(String.valueOf(want.get(key))))
                            .append(", got ").append(abbreviate(String.valueOf(got.get(key))));
                }
            }
            return text.toString();
        }
        return "expected " + abbreviate(String.valueOf(expected)) + "\n     got      " + abbreviate(String.valueOf(actual));
    }

    /** Where two lists part: the first differing element of each, and their sizes. */
    static String listDifference(java.util.List<?> want, java.util.List<?> got) {
        int i = 0;
        while (i < want.size() && i < got.size() && Objects.equals(want.get(i), got.get(i))) {
            i++;
        }
        return "from element " + i + " of " + want.size() + " expected " + abbreviate(String.valueOf(i < want.size() ? want.get(i) : "(end)"))
                + "\n       but " + got.size() + " elements, element " + i + " " + abbreviate(String.valueOf(i < got.size() ? got.get(i) : "(end)"));
    }

    /** Long values (a large transaction's rows) cut to what a verdict line can show. */
    public static String abbreviate(String text) {
        return text.length() > 1500 ? text.substring(0, 1500) + "..." : text;
    }

    /**
     * Prints the closing `N passed, M failed` line and exits non-zero on a
     * failure or when nothing was checked.
     */
    public void finish() {
        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 && passed > 0 ? 0 : 1);
    }
}

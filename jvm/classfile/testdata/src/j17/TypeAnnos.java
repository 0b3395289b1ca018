import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

// Compiled with: javac --release 17 -g -d ../classes j17/TypeAnnos.java
// Type annotations on every kind of Code target (local variable, resource,
// catch, instanceof, new, cast, type arguments, method references), plus
// class, field and method targets.
public class TypeAnnos<@Vis T extends @Inv Object> implements @Vis Runnable {
    @Vis(1) List<@Inv String> field = new ArrayList<>();

    public void run() {}

    <@Vis U> @Vis(2) String m(@Vis(3) Object o) throws @Inv RuntimeException {
        @Vis(value = 4, tags = {"a", "b"}, nested = @Inv, kind = ElementType.FIELD, type = String.class)
        List<@Inv String> xs = new @Vis(5) ArrayList<@Inv String>();
        try (@Vis(6) AutoCloseable c = () -> {}) {
            if (o instanceof @Vis(7) String) {
                xs.add((@Inv String) o);
            }
        } catch (@Vis(8) Exception e) {
            xs.add(e.toString());
        }
        Supplier<List<String>> sup = ArrayList<@Inv String>::new;
        Supplier<String> ts = this::toString;
        java.util.Collections.<@Vis(9) String>emptyList();
        return xs.toString() + sup.get() + ts.get();
    }
}

@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE_USE, ElementType.TYPE_PARAMETER})
@interface Vis {
    int value() default 0;
    String[] tags() default {};
    Inv nested() default @Inv;
    ElementType kind() default ElementType.TYPE_USE;
    Class<?> type() default Object.class;
}

@Retention(RetentionPolicy.CLASS)
@Target({ElementType.TYPE_USE, ElementType.TYPE_PARAMETER})
@interface Inv {}

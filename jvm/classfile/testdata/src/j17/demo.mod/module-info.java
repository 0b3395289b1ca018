// Compiled with: javac --release 17 -d OUT (then copy OUT/module-info.class to ../classes) j17/demo.mod/module-info.java j17/demo.mod/p/Api.java
module demo.mod {
    requires java.logging;
    exports p;
    uses java.util.logging.Filter;
}
